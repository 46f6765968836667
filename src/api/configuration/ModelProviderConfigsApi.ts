import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { ModelProviderConfigId, OrgId } from "../../domain/shared/Ids.ts"
import { CreateModelProviderConfig, ModelProviderConfig, UpdateModelProviderConfig } from "../../domain/configuration/ModelProviderConfigs.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { OrgPath } from "../tenancy/OrganizationsApi.ts"
import { Authentication } from "../Security.ts"

const ProviderConfigPath = Schema.Struct({ orgID: OrgId, modelProviderConfigID: ModelProviderConfigId })

export class ModelProviderConfigsApi extends HttpApiGroup.make("modelProviderConfigs")
  .annotate(OpenApi.Title, "Model provider configs")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/model-provider-configs")
      .annotate(OpenApi.Summary, "Create a model provider config")
      .setPath(OrgPath)
      .setPayload(CreateModelProviderConfig)
      .addSuccess(ModelProviderConfig, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/model-provider-configs")
      .annotate(OpenApi.Summary, "List model provider configs")
      .setPath(OrgPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(ModelProviderConfig))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/model-provider-configs/:modelProviderConfigID")
      .annotate(OpenApi.Summary, "Get a model provider config")
      .setPath(ProviderConfigPath)
      .addSuccess(ModelProviderConfig)
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/model-provider-configs/:modelProviderConfigID")
      .annotate(OpenApi.Summary, "Update a model provider config")
      .setPath(ProviderConfigPath)
      .setPayload(UpdateModelProviderConfig)
      .addSuccess(ModelProviderConfig)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/model-provider-configs/:modelProviderConfigID")
      .annotate(OpenApi.Summary, "Delete a model provider config")
      .setPath(ProviderConfigPath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Model provider configs: an API format, a base URL and a credential secret. Deleting one is refused " +
      "while it has configured models; cluster-managed configs are read-only"
  )
{}
