import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
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
    HttpApiEndpoint.post("create", "/orgs/:orgID/projects", {
      params: OrgPath,
      payload: ProjectInput,
      success: Project.pipe(HttpApiSchema.status(201)),
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Create a project")
      .annotate(
        OpenApi.Description,
        "Answers 201. Needs the admin or owner role in the organization (a member is 403). 409 when the " +
          "organization has a project of that name."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/projects", {
      params: OrgPath,
      query: ListQuery,
      success: Page(Project),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the organization's projects")
      .annotate(
        OpenApi.Description,
        "Every project of the organization. Oldest first; paginated (limit, cursor). Any member of the " +
          "organization may call it."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/projects/:projectID", {
      params: ProjectPath,
      success: Project,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a project")
      .annotate(
        OpenApi.Description,
        "Needs project read access (any member of the organization has it). 404 for an unknown project."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/projects/:projectID", {
      params: ProjectPath,
      payload: ProjectInput,
      success: Project,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Update a project")
      .annotate(
        OpenApi.Description,
        "Renames the project. Needs project admin access (403 otherwise). 409 when the organization has a " +
          "project of that name."
      )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/projects/:projectID", {
      params: ProjectPath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Delete a project")
      .annotate(
        OpenApi.Description,
        "Deletes the project and its agents. Needs the admin or owner role in the organization (a member " +
          "is 403). 404 for an unknown project."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Projects of an organization; names are unique within it")
{}
