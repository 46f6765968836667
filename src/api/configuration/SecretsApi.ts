import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { CreateGrant } from "../../domain/configuration/Grants.ts"
import { OrgId, SecretGrantId, SecretId } from "../../domain/shared/Ids.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { CreateSecret, RotateSecretValue, Secret, SecretGrant } from "../../domain/configuration/Secrets.ts"
import { OrgPath } from "../tenancy/OrganizationsApi.ts"
import { Authentication } from "../Security.ts"

const SecretPath = Schema.Struct({ orgID: OrgId, secretID: SecretId })
const SecretGrantPath = Schema.Struct({ orgID: OrgId, secretID: SecretId, grantID: SecretGrantId })

export class SecretsApi extends HttpApiGroup.make("secrets")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/secrets")
      .setPath(OrgPath)
      .setPayload(CreateSecret)
      .addSuccess(Secret, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/secrets")
      .setPath(OrgPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(Secret))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/secrets/:secretID")
      .setPath(SecretPath)
      .addSuccess(Secret)
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.put("rotate", "/orgs/:orgID/secrets/:secretID/value")
      .setPath(SecretPath)
      .setPayload(RotateSecretValue)
      .addSuccess(Secret)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/secrets/:secretID")
      .setPath(SecretPath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.post("createGrant", "/orgs/:orgID/secrets/:secretID/grants")
      .setPath(SecretPath)
      .setPayload(CreateGrant)
      .addSuccess(SecretGrant, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.get("listGrants", "/orgs/:orgID/secrets/:secretID/grants")
      .setPath(SecretPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(SecretGrant))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.del("removeGrant", "/orgs/:orgID/secrets/:secretID/grants/:grantID")
      .setPath(SecretGrantPath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Secrets: values are encrypted at rest and never returned. Organization secrets are managed by " +
      "org admins and granted to projects; personal secrets (owner: personal) are visible to their owner only"
  )
{}
