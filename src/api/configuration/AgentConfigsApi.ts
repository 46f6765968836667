import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, InvalidRequest, NotFound, ValidationFailed } from "../../domain/shared/Errors.ts"
import { AgentConfigId, OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { AgentConfig, CreateAgentConfig } from "../../domain/configuration/agent-config/AgentConfig.ts"
import { ProjectPath } from "../tenancy/ProjectsApi.ts"
import { Authentication } from "../Security.ts"

export const AgentConfigPath = Schema.Struct({ orgID: OrgId, projectID: ProjectId, agentConfigID: AgentConfigId })

export class AgentConfigsApi extends HttpApiGroup.make("agentConfigs")
  .annotate(OpenApi.Title, "Agent configs")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/projects/:projectID/agent-configs")
      .annotate(OpenApi.Summary, "Create an agent config")
      .setPath(ProjectPath)
      .setPayload(CreateAgentConfig)
      .addSuccess(AgentConfig.annotations({ description: "a new config" }), { status: 201 })
      .addSuccess(AgentConfig.annotations({ description: "the config this source made before (same names, same resources)" }))
      .addError(ValidationFailed.Wire)
      .addError(InvalidRequest.Wire)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/projects/:projectID/agent-configs")
      .annotate(OpenApi.Summary, "List the project's agent configs")
      .setPath(ProjectPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(AgentConfig))
      .addError(NotFound.Wire)
      .annotate(OpenApi.Description, "Newest first")
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/projects/:projectID/agent-configs/:agentConfigID")
      .annotate(OpenApi.Summary, "Get an agent config")
      .setPath(AgentConfigPath)
      .addSuccess(AgentConfig)
      .addError(NotFound.Wire)
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Immutable agent configs made from YAML or JSON sources; creation is idempotent by content"
  )
{}
