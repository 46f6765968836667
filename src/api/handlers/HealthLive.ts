import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../layers/http/BuiltWithOnly.ts"
import { Readiness } from "../../services/shared/Readiness.ts"
import { ApiErrors } from "../ApiErrors.ts"
import { Api } from "../Api.ts"

export const HealthLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.map(Effect.service(Readiness), (readiness) =>
    handlers
      .handle("live", () => Effect.succeed({ status: "ok" }))
      .handle("ready", () => Effect.as(readiness.check, { status: "ready" }))))
  .pipe(builtWithOnly(Readiness, ApiErrors))
