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
  noun: "secret",
  whoManages: "Needs the admin or owner role in the organization (a member is 403).",
  whoReads: "Any member of the organization may call it (another member's personal secret is 404).",
  refusals: "A personal secret is not granted (400)."
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
      .annotate(
        OpenApi.Description,
        "Answers 201 with the secret, never its value. An organization secret needs the admin or owner " +
          "role in the organization (a member is 403); a personal secret (owner: personal) any member, not " +
          "an organization API key (403). 409 when the name is taken among the organization's secrets, or " +
          "among your personal ones."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/secrets", {
      params: OrgPath,
      query: ListQuery,
      success: Page(Secret),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the organization's secrets")
      .annotate(
        OpenApi.Description,
        "The organization's secrets and your personal ones, never their values. Oldest first; paginated " +
          "(limit, cursor). Any member of the organization may call it."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/secrets/:secretID", {
      params: SecretPath,
      success: Secret,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a secret (never its value)")
      .annotate(
        OpenApi.Description,
        "Any member of the organization may call it (another member's personal secret is 404)."
      )
  )
  .add(
    HttpApiEndpoint.put("rotate", "/orgs/:orgID/secrets/:secretID/value", {
      params: SecretPath,
      payload: RotateSecretValue,
      success: Secret,
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Replace a secret's value")
      .annotate(
        OpenApi.Description,
        "The id stays: whatever uses the secret takes the new value at its next use. An organization " +
          "secret needs the admin or owner role in the organization (a member is 403); a personal secret, " +
          "being its owner (another member's is 404)."
      )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/secrets/:secretID", {
      params: SecretPath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Delete a secret")
      .annotate(
        OpenApi.Description,
        "An organization secret needs the admin or owner role in the organization (a member is 403); a " +
          "personal secret, being its owner. 409 while a model provider config or a machine pool uses it " +
          "(the error names them): point them at another secret or delete them first."
      )
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
