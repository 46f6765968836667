import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { Project, ProjectInput } from "../../domain/tenancy/Projects.ts"
import { OrgPath } from "./OrganizationsApi.ts"
import { Authentication } from "../Security.ts"

export const ProjectPath = Schema.Struct({ orgID: OrgId, projectID: ProjectId })

export class ProjectsApi extends HttpApiGroup.make("projects")
  .annotate(OpenApi.Title, "Projects")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/projects")
      .annotate(OpenApi.Summary, "Create a project")
      .setPath(OrgPath)
      .setPayload(ProjectInput)
      .addSuccess(Project, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/projects")
      .annotate(OpenApi.Summary, "List the organization's projects")
      .setPath(OrgPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(Project))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/projects/:projectID")
      .annotate(OpenApi.Summary, "Get a project")
      .setPath(ProjectPath)
      .addSuccess(Project)
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/projects/:projectID")
      .annotate(OpenApi.Summary, "Update a project")
      .setPath(ProjectPath)
      .setPayload(ProjectInput)
      .addSuccess(Project)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/projects/:projectID")
      .annotate(OpenApi.Summary, "Delete a project")
      .setPath(ProjectPath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Projects of an organization; names are unique within it")
{}
