import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
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
    HttpApiEndpoint.post("create", "/orgs/:orgID/model-provider-configs", {
      params: OrgPath,
      payload: CreateModelProviderConfig,
      success: ModelProviderConfig.pipe(HttpApiSchema.status(201)),
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Create a model provider config")
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/model-provider-configs", {
      params: OrgPath,
      query: ListQuery,
      success: Page(ModelProviderConfig),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List model provider configs")
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/model-provider-configs/:modelProviderConfigID", {
      params: ProviderConfigPath,
      success: ModelProviderConfig,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a model provider config")
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/model-provider-configs/:modelProviderConfigID", {
      params: ProviderConfigPath,
      payload: UpdateModelProviderConfig,
      success: ModelProviderConfig,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Update a model provider config")
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/model-provider-configs/:modelProviderConfigID", {
      params: ProviderConfigPath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Delete a model provider config")
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Model provider configs: an API format, a base URL and a credential secret. Deleting one is refused " +
      "while it has configured models; cluster-managed configs are read-only"
  )
{}
