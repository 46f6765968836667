import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { DecimalInteger } from "../../domain/shared/DecimalInteger.ts"
import { Conflict, Forbidden, InvalidRequest, NotFound, RequestTooLarge } from "../../domain/shared/Errors.ts"
import { OrgId, SkillGrantId, SkillId } from "../../domain/shared/Ids.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { CreateSkill, CreateSkillVersion, Skill, SkillGrant, SkillVersion } from "../../domain/configuration/Skills.ts"
import { OrgPath } from "../tenancy/OrganizationsApi.ts"
import { Authentication } from "../Security.ts"
import { grantEndpoints } from "./GrantEndpoints.ts"

const SkillPath = Schema.Struct({ orgID: OrgId, skillID: SkillId })
const SkillVersionPath = Schema.Struct({
  orgID: OrgId,
  skillID: SkillId,
  version: DecimalInteger(1)
})

const grants = grantEndpoints({
  route: "/orgs/:orgID/skills/:skillID",
  resourcePath: SkillPath,
  grantPath: Schema.Struct({ ...SkillPath.fields, grantID: SkillGrantId }),
  grant: SkillGrant,
  noun: "skill"
})

export class SkillsApi extends HttpApiGroup.make("skills")
  .annotate(OpenApi.Title, "Skills")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/skills", {
      params: OrgPath,
      payload: CreateSkill,
      success: Skill.pipe(HttpApiSchema.status(201)),
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire, InvalidRequest.Wire, RequestTooLarge.Wire]
    })
      .annotate(OpenApi.Summary, "Create a skill")
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/skills", {
      params: OrgPath,
      query: ListQuery,
      success: Page(Skill),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List skills")
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/skills/:skillID", {
      params: SkillPath,
      success: Skill,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a skill")
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/skills/:skillID", {
      params: SkillPath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Delete a skill")
  )
  .add(
    HttpApiEndpoint.post("createVersion", "/orgs/:orgID/skills/:skillID/versions", {
      params: SkillPath,
      payload: CreateSkillVersion,
      success: SkillVersion.pipe(HttpApiSchema.status(201)),
      error: [NotFound.Wire, Forbidden.Wire, InvalidRequest.Wire, RequestTooLarge.Wire]
    })
      .annotate(OpenApi.Summary, "Publish a new version of a skill")
  )
  .add(
    HttpApiEndpoint.get("listVersions", "/orgs/:orgID/skills/:skillID/versions", {
      params: SkillPath,
      query: ListQuery,
      success: Page(SkillVersion),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List a skill's versions")
  )
  .add(
    HttpApiEndpoint.get("getVersion", "/orgs/:orgID/skills/:skillID/versions/:version", {
      params: SkillVersionPath,
      success: SkillVersion,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a skill version")
  )
  .add(grants.createGrant)
  .add(grants.listGrants)
  .add(grants.removeGrant)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Skills owned by a project or personal to a member, with immutable versions and project grants"
  )
{}
