import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
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
    HttpApiEndpoint.post("create", "/orgs/:orgID/skills")
      .annotate(OpenApi.Summary, "Create a skill")
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
      .annotate(OpenApi.Summary, "List skills")
      .setPath(OrgPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(Skill))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/skills/:skillID")
      .annotate(OpenApi.Summary, "Get a skill")
      .setPath(SkillPath)
      .addSuccess(Skill)
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/skills/:skillID")
      .annotate(OpenApi.Summary, "Delete a skill")
      .setPath(SkillPath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.post("createVersion", "/orgs/:orgID/skills/:skillID/versions")
      .annotate(OpenApi.Summary, "Publish a new version of a skill")
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
      .annotate(OpenApi.Summary, "List a skill's versions")
      .setPath(SkillPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(SkillVersion))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.get("getVersion", "/orgs/:orgID/skills/:skillID/versions/:version")
      .annotate(OpenApi.Summary, "Get a skill version")
      .setPath(SkillVersionPath)
      .addSuccess(SkillVersion)
      .addError(NotFound.Wire)
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
