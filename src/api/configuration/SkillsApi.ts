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
  noun: "skill",
  whoManages: "Needs project write access to the skill's owning project (403 otherwise); for a personal skill, " +
    "being its owner (another member's is 404).",
  whoReads: "Any member of the organization may call it (another member's personal skill is 404).",
  refusals: "Granting it to its owning project is 409 too."
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
      .annotate(
        OpenApi.Description,
        "Answers 201 with the skill; its content becomes version 1. Give exactly one owner: " +
          "owner_project_id (needs project write access to that project) or owner: personal (yours; not for " +
          "organization API keys, 403). 400 for content outside its limits (413 over 512 KiB); 409 when the " +
          "owner has a skill of that name."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/skills", {
      params: OrgPath,
      query: ListQuery,
      success: Page(Skill),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List skills")
      .annotate(
        OpenApi.Description,
        "The skills of the organization's projects and your personal ones. Oldest first; paginated (limit, " +
          "cursor). Any member of the organization may call it."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/skills/:skillID", {
      params: SkillPath,
      success: Skill,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a skill")
      .annotate(
        OpenApi.Description,
        "Any member of the organization may call it (another member's personal skill is 404)."
      )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/skills/:skillID", {
      params: SkillPath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Delete a skill")
      .annotate(
        OpenApi.Description,
        "Deletes the skill with all its versions and grants; agent configs keep the ids they compiled. " +
          "Needs project write access to the skill's owning project (403 otherwise); for a personal skill, " +
          "being its owner (another member's is 404)."
      )
  )
  .add(
    HttpApiEndpoint.post("createVersion", "/orgs/:orgID/skills/:skillID/versions", {
      params: SkillPath,
      payload: CreateSkillVersion,
      success: SkillVersion.pipe(HttpApiSchema.status(201)),
      error: [NotFound.Wire, Forbidden.Wire, InvalidRequest.Wire, RequestTooLarge.Wire]
    })
      .annotate(OpenApi.Summary, "Publish a new version of a skill")
      .annotate(
        OpenApi.Description,
        "Adds the next version (2, 3, ...) from content and answers 201; versions never change. Needs " +
          "project write access to the skill's owning project (403 otherwise); for a personal skill, being " +
          "its owner (another member's is 404). 400 for content outside its limits (413 over 512 KiB)."
      )
  )
  .add(
    HttpApiEndpoint.get("listVersions", "/orgs/:orgID/skills/:skillID/versions", {
      params: SkillPath,
      query: ListQuery,
      success: Page(SkillVersion),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List a skill's versions")
      .annotate(
        OpenApi.Description,
        "Each version with its content. Oldest (version 1) first; paginated (limit, cursor). Any member of " +
          "the organization may call it (another member's personal skill is 404)."
      )
  )
  .add(
    HttpApiEndpoint.get("getVersion", "/orgs/:orgID/skills/:skillID/versions/:version", {
      params: SkillVersionPath,
      success: SkillVersion,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a skill version")
      .annotate(
        OpenApi.Description,
        "Any member of the organization may call it (another member's personal skill is 404). 404 for a " +
          "version the skill does not have."
      )
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
