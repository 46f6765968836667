/**
 * Loaded into the `node:http` + `pg` baseline's process (bench/baselineServer.ts) by
 * bench/requestCost.ts (`--import`): the standard rounds (requestCostRounds.ts) against the
 * organization and the busy agents this server's driver made (BENCH_REQUEST_COST_PATHS, a
 * `BaselinePaths` as JSON), with the key BENCH_REQUEST_COST_TOKEN.
 */
import type { BaselinePaths } from "./requestCostDriver.ts"
import { measureRounds, standardRounds } from "./requestCostRounds.ts"

measureRounds(async () => {
  const { inputPaths, orgPath } = JSON.parse(process.env.BENCH_REQUEST_COST_PATHS!) as BaselinePaths
  return { rounds: standardRounds(process.env.BENCH_REQUEST_COST_TOKEN!, orgPath, inputPaths) }
})
