import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
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
    HttpApiEndpoint.post("create", "/orgs/:orgID/secrets", {
      params: OrgPath,
      payload: CreateSecret,
      success: Secret.pipe(HttpApiSchema.status(201)),
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Create a secret")
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/secrets", {
      params: OrgPath,
      query: ListQuery,
      success: Page(Secret),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the organization's secrets")
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/secrets/:secretID", {
      params: SecretPath,
      success: Secret,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a secret (never its value)")
  )
  .add(
    HttpApiEndpoint.put("rotate", "/orgs/:orgID/secrets/:secretID/value", {
      params: SecretPath,
      payload: RotateSecretValue,
      success: Secret,
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Replace a secret's value")
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/secrets/:secretID", {
      params: SecretPath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Delete a secret")
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
