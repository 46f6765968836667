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
      .annotate(
        OpenApi.Description,
        "The user the API key (or browser session) acts for: id, e-mail address, creation time. Not for " +
          "organization API keys (403)."
      )
  )
  .add(
    HttpApiEndpoint.post("createApiKey", "/user/api-keys", {
      payload: CreateApiKey,
      success: CreatedPersonalApiKey.pipe(HttpApiSchema.status(201)),
      error: [Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Create a personal API key")
      .annotate(
        OpenApi.Description,
        "Answers 201 with the new key; its token is shown only in this answer. The key acts as you in " +
          "every organization you belong to. Not for organization API keys (403). 409 when you have 1,000 " +
          "keys already: delete one first."
      )
  )
  .add(
    HttpApiEndpoint.get("listApiKeys", "/user/api-keys", {
      query: ListQuery,
      success: Page(PersonalApiKey),
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "List your personal API keys")
      .annotate(
        OpenApi.Description,
        "Your keys, without their tokens. Oldest first; paginated (limit, cursor). Not for organization " +
          "API keys (403)."
      )
  )
  .add(
    HttpApiEndpoint.delete("deleteApiKey", "/user/api-keys/:keyID", {
      params: Schema.Struct({ keyID: ApiKeyId }),
      success: HttpApiSchema.NoContent,
      error: [Forbidden.Wire, NotFound.Wire]
    })
      .annotate(OpenApi.Summary, "Revoke a personal API key")
      .annotate(
        OpenApi.Description,
        "Deletes one of your keys: requests with it are refused at once, and the browser sessions it " +
          "opened end. 404 for a key that is not one of yours. Not for organization API keys (403)."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Description, "The calling user and their personal API keys (personal keys only)")
{}
