import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
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
    HttpApiEndpoint.post("create", "/orgs/:orgID/models")
      .annotate(OpenApi.Summary, "Configure a model")
      .setPath(OrgPath)
      .setPayload(CreateConfiguredModel)
      .addSuccess(ConfiguredModel, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/models")
      .annotate(OpenApi.Summary, "List configured models")
      .setPath(OrgPath)
      .setUrlParams(ModelListQuery)
      .addSuccess(Page(ConfiguredModel))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/models/:modelID")
      .annotate(OpenApi.Summary, "Get a configured model")
      .setPath(ModelPath)
      .addSuccess(ConfiguredModel)
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/models/:modelID")
      .annotate(OpenApi.Summary, "Update a model (records a new revision)")
      .setPath(ModelPath)
      .setPayload(UpdateConfiguredModel)
      .addSuccess(ConfiguredModel)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.get("revisions", "/orgs/:orgID/models/:modelID/revisions")
      .annotate(OpenApi.Summary, "List a model's revisions")
      .setPath(ModelPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(ModelRevision))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/models/:modelID")
      .annotate(OpenApi.Summary, "Delete a configured model")
      .setPath(ModelPath)
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
    "Configured models: settings live in immutable revisions (every PATCH adds one, listed newest " +
      "first); a project can use only the models granted to it"
  )
{}
