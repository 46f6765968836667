import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Forbidden } from "../../domain/shared/Errors.ts"
import { UserSettings, UserSettingsPatch } from "../../domain/workspaces/UserSettings.ts"
import { BearerAuthentication } from "../Security.ts"

export class UserSettingsApi extends HttpApiGroup.make("userSettings")
  .annotate(OpenApi.Title, "User settings")
  .add(
    HttpApiEndpoint.get("get", "/user/settings", {
      success: UserSettings,
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "Get your settings")
      .annotate(
        OpenApi.Description,
        "Your settings document, with its defaults in place. Not for organization API keys (403)."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/user/settings", {
      payload: UserSettingsPatch,
      success: UserSettings,
      error: Forbidden.Wire
    })
      .annotate(OpenApi.Summary, "Change your settings")
      .annotate(
        OpenApi.Description,
        "A JSON merge patch: objects merge key by key, null removes a key (a default comes back), any other " +
          "value replaces it. Answers the whole stored document."
      )
  )
  .middleware(BearerAuthentication)
  .annotate(
    OpenApi.Description,
    "The calling user's settings, one document per user (personal API keys only). Served as " +
      "/api/v1/user/settings, like every route of this document."
  )
{}
