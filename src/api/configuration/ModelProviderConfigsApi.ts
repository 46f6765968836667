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
      .annotate(
        OpenApi.Description,
        "Answers 201. Needs the admin or owner role in the organization (a member is 403). 400 when " +
          "base_url is not an absolute http or https URL without credentials, query or fragment, or " +
          "auth_secret_id is not a secret you can see in the organization; 409 when the organization has a " +
          "config of that name."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/model-provider-configs", {
      params: OrgPath,
      query: ListQuery,
      success: Page(ModelProviderConfig),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List model provider configs")
      .annotate(
        OpenApi.Description,
        "Oldest first; paginated (limit, cursor). Any member of the organization may call it."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/model-provider-configs/:modelProviderConfigID", {
      params: ProviderConfigPath,
      success: ModelProviderConfig,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a model provider config")
      .annotate(OpenApi.Description, "Any member of the organization may call it.")
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/model-provider-configs/:modelProviderConfigID", {
      params: ProviderConfigPath,
      payload: UpdateModelProviderConfig,
      success: ModelProviderConfig,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Update a model provider config")
      .annotate(
        OpenApi.Description,
        "Changes the fields given (null clears auth_secret_id or description). Needs the admin or owner " +
          "role in the organization (a member is 403); a cluster-managed config is 403, and so is a new " +
          "base_url for a config that sends another member's personal secret, unless the same request sets " +
          "auth_secret_id. 409 when the organization has a config of that name."
      )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/model-provider-configs/:modelProviderConfigID", {
      params: ProviderConfigPath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Delete a model provider config")
      .annotate(
        OpenApi.Description,
        "Deletes the config only. Needs the admin or owner role in the organization (a member is 403); a " +
          "cluster-managed config is 403. 409 while it has configured models (the error names them): delete " +
          "them first."
      )
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Model provider configs: an API format, a base URL and a credential secret. Deleting one is refused " +
      "while it has configured models; cluster-managed configs are read-only"
  )
{}
