import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { Conflict, Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { ApiKeyId } from "../../domain/shared/Ids.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { CreateApiKey, CreatedPersonalApiKey, PersonalApiKey } from "../../domain/tenancy/ApiKeys.ts"
import { User } from "../../domain/tenancy/Users.ts"
import { Authentication } from "../Security.ts"

export class UserApi extends HttpApiGroup.make("user")
  .annotate(OpenApi.Title, "User")
  .add(
    HttpApiEndpoint.get("get", "/user", {
      success: User,
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "Get the calling user")
  )
  .add(
    HttpApiEndpoint.post("createApiKey", "/user/api-keys", {
      payload: CreateApiKey,
      success: CreatedPersonalApiKey.pipe(HttpApiSchema.status(201)),
      error: [Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Create a personal API key")
  )
  .add(
    HttpApiEndpoint.get("listApiKeys", "/user/api-keys", {
      query: ListQuery,
      success: Page(PersonalApiKey),
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "List your personal API keys")
  )
  .add(
    HttpApiEndpoint.delete("deleteApiKey", "/user/api-keys/:keyID", {
      params: Schema.Struct({ keyID: ApiKeyId }),
      success: HttpApiSchema.NoContent,
      error: [Forbidden.Wire, NotFound.Wire]
    })
      .annotate(OpenApi.Summary, "Revoke a personal API key")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "The calling user and their personal API keys (personal keys only)")
{}
