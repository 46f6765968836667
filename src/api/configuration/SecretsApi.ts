import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { OrgId, SecretGrantId, SecretId } from "../../domain/shared/Ids.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { CreateSecret, RotateSecretValue, Secret, SecretGrant } from "../../domain/configuration/Secrets.ts"
import { OrgPath } from "../tenancy/OrganizationsApi.ts"
import { Authentication } from "../Security.ts"
import { grantEndpoints } from "./GrantEndpoints.ts"

const SecretPath = Schema.Struct({ orgID: OrgId, secretID: SecretId })

const grants = grantEndpoints({
  route: "/orgs/:orgID/secrets/:secretID",
  resourcePath: SecretPath,
  grantPath: Schema.Struct({ ...SecretPath.fields, grantID: SecretGrantId }),
  grant: SecretGrant,
  noun: "secret"
})

export class SecretsApi extends HttpApiGroup.make("secrets")
  .annotate(OpenApi.Title, "Secrets")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/secrets")
      .annotate(OpenApi.Summary, "Create a secret")
      .setPath(OrgPath)
      .setPayload(CreateSecret)
      .addSuccess(Secret, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/secrets")
      .annotate(OpenApi.Summary, "List the organization's secrets")
      .setPath(OrgPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(Secret))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/secrets/:secretID")
      .annotate(OpenApi.Summary, "Get a secret (never its value)")
      .setPath(SecretPath)
      .addSuccess(Secret)
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.put("rotate", "/orgs/:orgID/secrets/:secretID/value")
      .annotate(OpenApi.Summary, "Replace a secret's value")
      .setPath(SecretPath)
      .setPayload(RotateSecretValue)
      .addSuccess(Secret)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/secrets/:secretID")
      .annotate(OpenApi.Summary, "Delete a secret")
      .setPath(SecretPath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(grants.createGrant)
  .add(grants.listGrants)
  .add(grants.removeGrant)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Secrets: values are encrypted at rest and never returned. Organization secrets are managed by " +
      "org admins and granted to projects; personal secrets (owner: personal) are visible to their owner only"
  )
{}
