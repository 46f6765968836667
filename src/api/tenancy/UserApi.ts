import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, NotFound } from "../../domain/shared/Errors.ts"
import { ApiKeyId } from "../../domain/shared/Ids.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { CreateApiKey, CreatedPersonalApiKey, PersonalApiKey } from "../../domain/tenancy/ApiKeys.ts"
import { User } from "../../domain/tenancy/Users.ts"
import { Authentication } from "../Security.ts"

export class UserApi extends HttpApiGroup.make("user")
  .annotate(OpenApi.Title, "User")
  .add(
    HttpApiEndpoint.get("get", "/user")
      .annotate(OpenApi.Summary, "Get the calling user")
      .addSuccess(User)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.post("createApiKey", "/user/api-keys")
      .annotate(OpenApi.Summary, "Create a personal API key")
      .setPayload(CreateApiKey)
      .addSuccess(CreatedPersonalApiKey, { status: 201 })
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.get("listApiKeys", "/user/api-keys")
      .annotate(OpenApi.Summary, "List your personal API keys")
      .setUrlParams(ListQuery)
      .addSuccess(Page(PersonalApiKey))
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.del("deleteApiKey", "/user/api-keys/:keyID")
      .annotate(OpenApi.Summary, "Revoke a personal API key")
      .setPath(Schema.Struct({ keyID: ApiKeyId }))
      .addSuccess(Schema.Void)
      .addError(Forbidden.Wire)
      .addError(NotFound.Wire)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "The calling user and their personal API keys (personal keys only)")
{}
