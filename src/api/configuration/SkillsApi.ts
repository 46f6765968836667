import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, Forbidden, InvalidRequest, NotFound, RequestTooLarge } from "../../domain/shared/Errors.ts"
import { OrgId, SkillGrantId, SkillId } from "../../domain/shared/Ids.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { CreateGrant } from "../../domain/configuration/Grants.ts"
import { CreateSkill, CreateSkillVersion, Skill, SkillGrant, SkillVersion } from "../../domain/configuration/Skills.ts"
import { OrgPath } from "../tenancy/OrganizationsApi.ts"
import { Authentication } from "../Security.ts"

export const SkillPath = Schema.Struct({ orgID: OrgId, skillID: SkillId })
export const SkillVersionPath = Schema.Struct({
  orgID: OrgId,
  skillID: SkillId,
  version: Schema.NumberFromString.pipe(Schema.int(), Schema.positive())
})
export const SkillGrantPath = Schema.Struct({ orgID: OrgId, skillID: SkillId, grantID: SkillGrantId })

export class SkillsApi extends HttpApiGroup.make("skills")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/skills")
      .setPath(OrgPath)
      .setPayload(CreateSkill)
      .addSuccess(Skill, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
      .addError(InvalidRequest.Wire)
      .addError(RequestTooLarge.Wire)
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/skills")
      .setPath(OrgPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(Skill))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/skills/:skillID")
      .setPath(SkillPath)
      .addSuccess(Skill)
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/skills/:skillID")
      .setPath(SkillPath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.post("createVersion", "/orgs/:orgID/skills/:skillID/versions")
      .setPath(SkillPath)
      .setPayload(CreateSkillVersion)
      .addSuccess(SkillVersion, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(InvalidRequest.Wire)
      .addError(RequestTooLarge.Wire)
  )
  .add(
    HttpApiEndpoint.get("listVersions", "/orgs/:orgID/skills/:skillID/versions")
      .setPath(SkillPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(SkillVersion))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.get("getVersion", "/orgs/:orgID/skills/:skillID/versions/:version")
      .setPath(SkillVersionPath)
      .addSuccess(SkillVersion)
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.post("createGrant", "/orgs/:orgID/skills/:skillID/grants")
      .setPath(SkillPath)
      .setPayload(CreateGrant)
      .addSuccess(SkillGrant, { status: 201 })
      .addError(InvalidRequest.Wire)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.get("listGrants", "/orgs/:orgID/skills/:skillID/grants")
      .setPath(SkillPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(SkillGrant))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.del("removeGrant", "/orgs/:orgID/skills/:skillID/grants/:grantID")
      .setPath(SkillGrantPath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Skills owned by a project or personal to a member, with immutable versions and project grants"
  )
{}
