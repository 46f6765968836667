import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { CreateGrant } from "../../domain/configuration/Grants.ts"
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

const ModelPath = Schema.Struct({ orgID: OrgId, modelID: ConfiguredModelId })
const ModelGrantPath = Schema.Struct({ orgID: OrgId, modelID: ConfiguredModelId, grantID: ModelGrantId })

export class ModelsApi extends HttpApiGroup.make("models")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/models")
      .setPath(OrgPath)
      .setPayload(CreateConfiguredModel)
      .addSuccess(ConfiguredModel, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/models")
      .setPath(OrgPath)
      .setUrlParams(ModelListQuery)
      .addSuccess(Page(ConfiguredModel))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/models/:modelID")
      .setPath(ModelPath)
      .addSuccess(ConfiguredModel)
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/models/:modelID")
      .setPath(ModelPath)
      .setPayload(UpdateConfiguredModel)
      .addSuccess(ConfiguredModel)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.get("revisions", "/orgs/:orgID/models/:modelID/revisions")
      .setPath(ModelPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(ModelRevision))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/models/:modelID")
      .setPath(ModelPath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.post("createGrant", "/orgs/:orgID/models/:modelID/grants")
      .setPath(ModelPath)
      .setPayload(CreateGrant)
      .addSuccess(ModelGrant, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.get("listGrants", "/orgs/:orgID/models/:modelID/grants")
      .setPath(ModelPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(ModelGrant))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.del("removeGrant", "/orgs/:orgID/models/:modelID/grants/:grantID")
      .setPath(ModelGrantPath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Configured models: settings live in immutable revisions (every PATCH adds one, listed newest " +
      "first); a project can use only the models granted to it"
  )
{}
