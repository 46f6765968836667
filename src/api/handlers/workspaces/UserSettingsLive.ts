import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Access } from "../../../services/tenancy/Access.ts"
import { UserSettings } from "../../../services/workspaces/UserSettings.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { BearerAuthentication } from "../../Security.ts"

export const UserSettingsLive = HttpApiBuilder.group(Api, "userSettings", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const settings = yield* UserSettings
    return handlers
      .handle("get", () => Effect.flatMap(access.requireUser, settings.get))
      .handle("update", ({ payload }) => Effect.flatMap(access.requireUser, (userId) => settings.update(userId, payload)))
  }))
  .pipe(builtWithOnly(Access, UserSettings, BearerAuthentication, ApiErrors))
