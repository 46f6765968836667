import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Access } from "../../../services/tenancy/Access.ts"
import { ApiKeys } from "../../../services/tenancy/ApiKeys.ts"
import { Users } from "../../../services/tenancy/Users.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const UserLive = HttpApiBuilder.group(Api, "user", (handlers) =>
  Effect.gen(function*() {
    const access = yield* Access
    const users = yield* Users
    const apiKeys = yield* ApiKeys
    return handlers
      .handle("get", () => Effect.flatMap(access.requireUser, (userId) => Effect.orDie(users.get(userId))))
      .handle("createApiKey", ({ payload }) =>
        Effect.flatMap(access.requireUser, (userId) => apiKeys.createPersonal(userId, payload.name)))
      .handle("listApiKeys", ({ query }) =>
        Effect.flatMap(access.requireUser, (userId) => apiKeys.listPersonal(userId, query)))
      .handle("deleteApiKey", ({ params }) =>
        Effect.flatMap(access.requireUser, (userId) => apiKeys.remove({ userId }, params.keyID)))
  }))
  .pipe(builtWithOnly(Access, ApiKeys, Users, Authentication, ApiErrors))
