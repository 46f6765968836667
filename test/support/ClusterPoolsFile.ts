/**
 * The start-up step of the operator's pools (AGENT_PLATFORM_CLUSTER_POOLS_FILE), run again in a
 * test with `pools` in a fresh file (or `raw` as the file's text), on the test's database.
 */
import { Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { AppConfig } from "../../src/layers/AppConfig.ts"
import { ClusterPoolsLive } from "../../src/layers/ClusterPools.ts"
import { ClusterPools } from "../../src/services/machines/ClusterPools.ts"
import { testConfig } from "./TestApp.ts"

export const installClusterPools = (pools: unknown, options: { raw?: string; config?: Partial<AppConfig["Type"]> } = {}) =>
  Effect.gen(function*() {
    const path = join(tmpdir(), `pools-cluster-${randomBytes(4).toString("hex")}.json`)
    writeFileSync(path, options.raw ?? JSON.stringify({ pools }))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(path, { force: true })))
    return yield* Effect.scoped(
      Layer.build(
        ClusterPoolsLive.pipe(
          Layer.provide(ClusterPools.layer),
          Layer.provide(testConfig({ ...options.config, clusterPoolsFile: Option.some(path) }))
        )
      )
    ).pipe(Effect.as(path))
  })
