import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
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
    HttpApiEndpoint.get("list", "/orgs/:orgID/projects/:projectID/members")
      .annotate(OpenApi.Summary, "List the project's members")
      .setPath(ProjectPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(ProjectMember))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.post("add", "/orgs/:orgID/projects/:projectID/members")
      .annotate(OpenApi.Summary, "Add a member to the project")
      .setPath(ProjectPath)
      .setPayload(AddProjectMember)
      .addSuccess(ProjectMember, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/projects/:projectID/members/:userID")
      .annotate(OpenApi.Summary, "Remove a member from the project")
      .setPath(Schema.Struct({ orgID: OrgId, projectID: ProjectId, userID: UserId }))
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Members of a project, drawn from the organization's members")
{}
