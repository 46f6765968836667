import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { OrgId, ProjectId, UserId } from "../../domain/shared/Ids.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { AddProjectMember, ProjectMember } from "../../domain/tenancy/ProjectMembers.ts"
import { ProjectPath } from "./ProjectsApi.ts"
import { Authentication } from "../Security.ts"

export class ProjectMembersApi extends HttpApiGroup.make("projectMembers")
  .annotate(OpenApi.Title, "Project members")
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/projects/:projectID/members", {
      params: ProjectPath,
      query: ListQuery,
      success: Page(ProjectMember),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the project's members")
      .annotate(
        OpenApi.Description,
        "Each project membership with the member's e-mail address. Ordered by user id; paginated (limit, " +
          "cursor). Needs project read access."
      )
  )
  .add(
    HttpApiEndpoint.post("add", "/orgs/:orgID/projects/:projectID/members", {
      params: ProjectPath,
      payload: AddProjectMember,
      success: ProjectMember.pipe(HttpApiSchema.status(201)),
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Add a member to the project")
      .annotate(
        OpenApi.Description,
        "Answers 201; the role is member unless given. Needs project admin access. 404 when the user is " +
          "not a member of the organization; 409 when they are a member of the project already."
      )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/projects/:projectID/members/:userID", {
      params: Schema.Struct({ orgID: OrgId, projectID: ProjectId, userID: UserId }),
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Remove a member from the project")
      .annotate(
        OpenApi.Description,
        "Ends the user's project membership. Needs project admin access. 404 when the user is not a member " +
          "of the project."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Members of a project, drawn from the organization's members")
{}
