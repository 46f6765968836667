import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { MachinePool } from "../../../domain/machines/MachinePools.ts"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { MachinePools } from "../../../services/machines/MachinePools.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

/** 201 is the endpoint's first success; a pool found again goes out as the declared 200. */
const existingPool = HttpServerResponse.schemaJson(MachinePool)

export const MachinePoolsLive = HttpApiBuilder.group(Api, "machinePools", (handlers) =>
  Effect.map(MachinePools, (pools) =>
    handlers
      .handle("create", ({ path, payload }) =>
        Effect.flatMap(
          pools.create(path.orgID, payload),
          ({ created, pool }): Effect.Effect<MachinePool | HttpServerResponse.HttpServerResponse> =>
            created ? Effect.succeed(pool) : existingPool(pool, { status: 200 }).pipe(Effect.orDie)
        ))
      .handle("checkConnection", ({ path, payload }) => pools.checkConnection(path.orgID, payload))
      .handle("list", ({ path, urlParams }) => pools.list(path.orgID, urlParams))
      .handle("get", ({ path }) => pools.get(path.orgID, path.poolID))
      .handle("update", ({ path, payload }) => pools.update(path.orgID, path.poolID, payload))
      .handle("remove", ({ path }) => pools.remove(path.orgID, path.poolID))
      .handle("createGrant", ({ path, payload }) => pools.createGrant(path.orgID, path.poolID, payload))
      .handle("listGrants", ({ path, urlParams }) => pools.listGrants(path.orgID, path.poolID, urlParams))
      .handle("removeGrant", ({ path }) => pools.removeGrant(path.orgID, path.poolID, path.grantID))))
  .pipe(builtWithOnly(MachinePools, Authentication))
