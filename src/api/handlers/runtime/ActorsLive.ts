import { HttpApiBuilder } from "effect/http-api"
import { HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { Actor } from "../../../domain/runtime/Actors.ts"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Actors } from "../../../services/runtime/Actors.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

/** 201 is the endpoint's first success; an actor found again goes out as the declared 200. */
const existingActor = HttpServerResponse.schemaJson(Actor)

export const ActorsLive = HttpApiBuilder.group(Api, "actors", (handlers) =>
  Effect.map(Effect.service(Actors), (actors) =>
    handlers
      .handle("create", ({ params, payload }) =>
        Effect.flatMap(
          actors.create(params.orgID, params.projectID, payload),
          ({ actor, created }): Effect.Effect<Actor | HttpServerResponse.HttpServerResponse> =>
            created ? Effect.succeed(actor) : existingActor(actor, { status: 200 }).pipe(Effect.orDie)
        ))
      .handle("list", ({ params, query }) => actors.list(params.orgID, params.projectID, query))))
  .pipe(builtWithOnly(Actors, Authentication, ApiErrors))
