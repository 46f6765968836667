import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { OrgId, ProjectId, UserId } from "../../domain/shared/Ids.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { AddProjectMember, ProjectMember } from "../../domain/tenancy/Projects.ts"
import { ProjectPath } from "./ProjectsApi.ts"
import { Authentication } from "../Security.ts"

export class ProjectMembersApi extends HttpApiGroup.make("projectMembers")
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/projects/:projectID/members")
      .setPath(ProjectPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(ProjectMember))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.post("add", "/orgs/:orgID/projects/:projectID/members")
      .setPath(ProjectPath)
      .setPayload(AddProjectMember)
      .addSuccess(ProjectMember, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/projects/:projectID/members/:userID")
      .setPath(Schema.Struct({ orgID: OrgId, projectID: ProjectId, userID: UserId }))
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "Members of a project, drawn from the organization's members")
{}
