/**
 * For tests and benchmarks with several server processes on one Postgres (docs/scale-out.md):
 * waits until the cluster has settled, that is every runner is registered and every shard is held,
 * spread over that many database sessions. Work started earlier may move when a late runner takes
 * its share of the shards.
 *
 * SqlRunnerStorage holds shard n of the default group as the advisory lock 1000000 + n; the
 * cluster has 300 shards (ShardingConfig's default `shardsPerGroup`).
 */
import pg from "pg"

const SHARDS = 300

const clusterState = async (databaseUrl: string) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const runners = await client.query("SELECT count(*)::int AS n FROM cluster_runners WHERE healthy")
    const locks = await client.query(`
      SELECT count(*)::int AS shards, count(DISTINCT pid)::int AS holders FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND classid = 0 AND objid BETWEEN 1000001 AND ${1_000_000 + SHARDS}`)
    return { runners: runners.rows[0].n as number, ...(locks.rows[0] as { shards: number; holders: number }) }
  } catch {
    // The cluster's tables do not exist before the first runner has started.
    return { runners: 0, shards: 0, holders: 0 }
  } finally {
    await client.end()
  }
}

export const waitForShards = async (databaseUrl: string, runners: number, timeoutMs = 120_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const state = await clusterState(databaseUrl)
    if (state.runners === runners && state.shards === SHARDS && state.holders === runners) return
    if (Date.now() > deadline) {
      throw new Error(`the cluster did not settle on ${runners} runners within ${timeoutMs} ms: ${JSON.stringify(state)}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
