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
  noun: "model"
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
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/models", {
      params: OrgPath,
      query: ModelListQuery,
      success: Page(ConfiguredModel),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List configured models")
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/models/:modelID", {
      params: ModelPath,
      success: ConfiguredModel,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a configured model")
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/models/:modelID", {
      params: ModelPath,
      payload: UpdateConfiguredModel,
      success: ConfiguredModel,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Update a model (records a new revision)")
  )
  .add(
    HttpApiEndpoint.get("revisions", "/orgs/:orgID/models/:modelID/revisions", {
      params: ModelPath,
      query: ListQuery,
      success: Page(ModelRevision),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List a model's revisions")
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/models/:modelID", {
      params: ModelPath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Delete a configured model")
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
