/**
 * AGENT_PLATFORM_CLUSTER_POOLS_FILE: at start, install the machine pools the operator declares
 * (`management_kind: cluster`, docs/machine-pools.md). A file that cannot be read, is not valid
 * JSON of the documented shape, or declares a pool the server refuses stops the start-up with a
 * message naming the problem. One process at a time (src/layers/StartupLock.ts).
 */
import { Effect, Layer, Option, Schema } from "effect"
import { readFile } from "node:fs/promises"
import { ClusterPoolsFile } from "../domain/machines/MachinePools.ts"
import { strict } from "../domain/shared/Strict.ts"
import { describeIssues } from "../process/SchemaIssues.ts"
import { ClusterPools, ClusterPoolsRefused } from "../services/machines/ClusterPools.ts"
import { AppConfig } from "./AppConfig.ts"
import { withStartupLock } from "./StartupLock.ts"

/** No property the file format does not list (strict, as a request body is). */
const decodeFile = Schema.decodeUnknownEffect(Schema.fromJsonString(ClusterPoolsFile), { errors: "all", ...strict })

export const ClusterPoolsLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isNone(config.clusterPoolsFile)) return
    const path = config.clusterPoolsFile.value
    const text = yield* Effect.tryPromise({
      try: () => readFile(path, "utf8"),
      catch: (error) => new ClusterPoolsRefused({ details: `cannot read ${path}: ${(error as Error).message}` })
    })
    const file = yield* decodeFile(text).pipe(
      Effect.mapError((error) =>
        new ClusterPoolsRefused({
          details: `${path} is not a valid cluster pools file: ${describeIssues(error)}`
        })
      )
    )
    const pools = yield* ClusterPools
    const result = yield* withStartupLock(pools.installClusterPools(file))
    if (result.skipped.length > 0) {
      yield* Effect.logWarning(
        "cluster pools skipped: a tenant pool of the organization has the name already; rename one of them"
      ).pipe(Effect.annotateLogs({ pools: result.skipped.join(", ") }))
    }
    yield* Effect.logInfo("cluster pools installed").pipe(
      Effect.annotateLogs({
        installed: result.installed,
        updated: result.updated,
        unchanged: result.unchanged,
        removed: result.removed
      })
    )
  })
)
