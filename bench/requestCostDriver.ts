/**
 * Loaded into this server's process by bench/requestCost.ts (`--import`): once the server answers
 * on its port, sets up a project over HTTP (runtime.ts's `setUp`, the scripted provider at
 * BENCH_PROVIDER_URL holding every model call) with the appends' agents each in a held turn
 * (appends.ts), then measures the standard rounds (requestCostRounds.ts). With
 * BENCH_REQUEST_COST_BASELINE=1 it then makes as many busy agents again, for the `node:http` +
 * `pg` baseline to queue its inputs to (bench/requestCostBaselineDriver.ts), and writes their
 * paths with its rounds (`BaselinePaths`).
 */
import { busyAgentPaths } from "./appends.ts"
import { baseUrl, measureRounds, standardRounds } from "./requestCostRounds.ts"
import { setUp } from "./runtime.ts"

/** Where the baseline sends its requests: the organization, and the inputs of agents in held turns. */
export interface BaselinePaths {
  readonly orgPath: string
  readonly inputPaths: ReadonlyArray<string>
}

const token = process.env.AGENT_PLATFORM_BOOTSTRAP_TOKEN!

measureRounds(async () => {
  const { configId, projectUrl } = await setUp(baseUrl, token, process.env.BENCH_PROVIDER_URL!)
  const orgPath = new URL(projectUrl).pathname.split("/projects/")[0]
  return {
    rounds: standardRounds(token, orgPath, await busyAgentPaths(projectUrl, configId, token)),
    after: async (): Promise<BaselinePaths | undefined> =>
      process.env.BENCH_REQUEST_COST_BASELINE === "1"
        ? { orgPath, inputPaths: await busyAgentPaths(projectUrl, configId, token) }
        : undefined
  }
})
