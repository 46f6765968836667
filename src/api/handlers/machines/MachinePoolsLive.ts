import { HttpApiBuilder } from "effect/http-api"
import { HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { MachinePool } from "../../../domain/machines/MachinePools.ts"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { MachinePools } from "../../../services/machines/MachinePools.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

/** 201 is the endpoint's first success; a pool found again goes out as the declared 200. */
const existingPool = HttpServerResponse.schemaJson(MachinePool)

export const MachinePoolsLive = HttpApiBuilder.group(Api, "machinePools", (handlers) =>
  Effect.map(Effect.service(MachinePools), (pools) =>
    handlers
      .handle("create", ({ params, payload }) =>
        Effect.flatMap(
          pools.create(params.orgID, payload),
          ({ created, pool }): Effect.Effect<MachinePool | HttpServerResponse.HttpServerResponse> =>
            created ? Effect.succeed(pool) : existingPool(pool, { status: 200 }).pipe(Effect.orDie)
        ))
      .handle("checkConnection", ({ params, payload }) => pools.checkConnection(params.orgID, payload))
      .handle("list", ({ params, query }) => pools.list(params.orgID, query))
      .handle("get", ({ params }) => pools.get(params.orgID, params.poolID))
      .handle("update", ({ params, payload }) => pools.update(params.orgID, params.poolID, payload))
      .handle("remove", ({ params }) => pools.remove(params.orgID, params.poolID))
      .handle("createGrant", ({ params, payload }) => pools.createGrant(params.orgID, params.poolID, payload))
      .handle("listGrants", ({ params, query }) => pools.listGrants(params.orgID, params.poolID, query))
      .handle("removeGrant", ({ params }) => pools.removeGrant(params.orgID, params.poolID, params.grantID))))
  .pipe(builtWithOnly(MachinePools, Authentication, ApiErrors))
