import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Actor } from "../../../domain/runtime/Actors.ts"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { Actors } from "../../../services/runtime/Actors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

/** 201 is the endpoint's first success; an actor found again goes out as the declared 200. */
const existingActor = HttpServerResponse.schemaJson(Actor)

export const ActorsLive = HttpApiBuilder.group(Api, "actors", (handlers) =>
  Effect.map(Actors, (actors) =>
    handlers
      .handle("create", ({ path, payload }) =>
        Effect.flatMap(
          actors.create(path.orgID, path.projectID, payload),
          ({ actor, created }): Effect.Effect<Actor | HttpServerResponse.HttpServerResponse> =>
            created ? Effect.succeed(actor) : existingActor(actor, { status: 200 }).pipe(Effect.orDie)
        ))
      .handle("list", ({ path, urlParams }) => actors.list(path.orgID, path.projectID, urlParams))))
  .pipe(builtWithOnly(Actors, Authentication))
