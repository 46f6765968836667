/**
 * The start-up step of the operator's pools (AGENT_PLATFORM_CLUSTER_POOLS_FILE), run again in a
 * test with `pools` in a fresh file (or `raw` as the file's text), on the test's database.
 */
import { Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { AppConfigShape } from "../../src/layers/AppConfig.ts"
import { ClusterPoolsLive } from "../../src/layers/ClusterPools.ts"
import { ClusterPools } from "../../src/services/machines/ClusterPools.ts"
import { testConfig } from "./TestApp.ts"

export const installClusterPools = (pools: unknown, options: { raw?: string; config?: Partial<AppConfigShape> } = {}) =>
  Effect.gen(function*() {
    const path = join(tmpdir(), `pools-cluster-${randomBytes(4).toString("hex")}.json`)
    writeFileSync(path, options.raw ?? JSON.stringify({ pools }))
    yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(path, { force: true })))
    // Layer.fresh: Effect 4's Layer.build reuses the layers the test's app already built (its memo
    // map is inherited), and the app built ClusterPoolsLive without a file; v3 built afresh each time.
    return yield* Effect.scoped(
      Layer.build(
        Layer.fresh(
          ClusterPoolsLive.pipe(
            Layer.provide(ClusterPools.layer),
            Layer.provide(testConfig({ ...options.config, clusterPoolsFile: Option.some(path) }))
          )
        )
      )
    ).pipe(Effect.as(path))
  })
