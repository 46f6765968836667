import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { ConfiguredModelId, ModelGrantId, OrgId } from "../../domain/shared/Ids.ts"
import {
  ConfiguredModel,
  CreateConfiguredModel,
  ModelGrant,
  ModelListQuery,
  ModelRevision,
  UpdateConfiguredModel
} from "../../domain/configuration/Models.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { OrgPath } from "../tenancy/OrganizationsApi.ts"
import { Authentication } from "../Security.ts"
import { grantEndpoints } from "./GrantEndpoints.ts"

const ModelPath = Schema.Struct({ orgID: OrgId, modelID: ConfiguredModelId })

const grants = grantEndpoints({
  route: "/orgs/:orgID/models/:modelID",
  resourcePath: ModelPath,
  grantPath: Schema.Struct({ ...ModelPath.fields, grantID: ModelGrantId }),
  grant: ModelGrant,
  noun: "model",
  whoManages: "Needs the admin or owner role in the organization (a member is 403).",
  whoReads: "Any member of the organization may call it."
})

export class ModelsApi extends HttpApiGroup.make("models")
  .annotate(OpenApi.Title, "Models")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/models", {
      params: OrgPath,
      payload: CreateConfiguredModel,
      success: ConfiguredModel.pipe(HttpApiSchema.status(201)),
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Configure a model")
      .annotate(
        OpenApi.Description,
        "Answers 201 with the model and its first revision's settings. Needs the admin or owner role in " +
          "the organization (a member is 403). 400 when provider_config_id is not a provider config of the " +
          "organization, or the settings do not hold together (one issue each); 409 when the provider config " +
          "has a model of that name."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/models", {
      params: OrgPath,
      query: ModelListQuery,
      success: Page(ConfiguredModel),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List configured models")
      .annotate(
        OpenApi.Description,
        "Oldest first; paginated (limit, cursor); provider_config_id keeps that provider config's models. " +
          "Any member of the organization may call it."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/models/:modelID", {
      params: ModelPath,
      success: ConfiguredModel,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a configured model")
      .annotate(
        OpenApi.Description,
        "The model with its current revision's settings. Any member of the organization may call it."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/models/:modelID", {
      params: ModelPath,
      payload: UpdateConfiguredModel,
      success: ConfiguredModel,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Update a model (records a new revision)")
      .annotate(
        OpenApi.Description,
        "Every PATCH, a rename too, records a revision with the patch applied and makes it current; " +
          "provider_config_id cannot change. Needs the admin or owner role in the organization (a member is " +
          "403). 409 when the provider config has a model of that name; a refused PATCH records nothing."
      )
  )
  .add(
    HttpApiEndpoint.get("revisions", "/orgs/:orgID/models/:modelID/revisions", {
      params: ModelPath,
      query: ListQuery,
      success: Page(ModelRevision),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List a model's revisions")
      .annotate(
        OpenApi.Description,
        "Newest first; paginated (limit, cursor). Any member of the organization may call it."
      )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/models/:modelID", {
      params: ModelPath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Delete a configured model")
      .annotate(
        OpenApi.Description,
        "Deletes the model with its revisions and grants. Needs the admin or owner role in the " +
          "organization (a member is 403). 409 while agent configs name it (they never change): revoke its " +
          "grants to stop projects using it."
      )
  )
  .add(grants.createGrant)
  .add(grants.listGrants)
  .add(grants.removeGrant)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Configured models: settings live in immutable revisions (every PATCH adds one, listed newest " +
      "first); a project can use only the models granted to it"
  )
{}
