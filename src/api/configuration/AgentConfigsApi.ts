import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
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
    HttpApiEndpoint.post("create", "/orgs/:orgID/projects/:projectID/agent-configs", {
      params: ProjectPath,
      payload: CreateAgentConfig,
      success: [
        AgentConfig.annotate({ description: "a new config" }).pipe(HttpApiSchema.status(201)),
        AgentConfig.annotate({ description: "the config this source made before (same names, same resources)" })
      ],
      error: [ValidationFailed.Wire, InvalidRequest.Wire, NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Create an agent config")
      .annotate(
        OpenApi.Description,
        "Compiles a YAML or JSON source: answers 201 with a new config, or 200 with the existing one when " +
          "the project has a config of the same source whose names resolve to the same resources. Needs " +
          "project write access. 400 validation_failed with issues (path, line, column) when the source is " +
          "not a valid definition or a name does not resolve."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/projects/:projectID/agent-configs", {
      params: ProjectPath,
      query: ListQuery,
      success: Page(AgentConfig),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the project's agent configs")
      .annotate(
        OpenApi.Description,
        "Newest first; paginated (limit, cursor). Needs project read access (any member of the organization has it)."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/projects/:projectID/agent-configs/:agentConfigID", {
      params: AgentConfigPath,
      success: AgentConfig,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get an agent config")
      .annotate(OpenApi.Description, "Needs project read access (any member of the organization has it).")
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Immutable agent configs made from YAML or JSON sources; creation is idempotent by content"
  )
{}
