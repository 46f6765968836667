/**
 * For tests and benchmarks with several server processes on one Postgres (docs/scale-out.md):
 * waits until the cluster has settled, that is every runner is registered and every shard is held,
 * spread over that many database sessions. Work started earlier may move when a late runner takes
 * its share of the shards.
 *
 * SqlRunnerStorage holds shard n of the default group as the advisory lock (namespace, 1000000 + n),
 * the namespace being the FNV-1a hash of "effect-cluster:cluster" (in pg_locks: `classid` 2839596291,
 * `objsubid` 2 for a two-key lock); the cluster has 300 shards (ShardingConfig's default `shardsPerGroup`).
 */
import pg from "pg"

const SHARDS = 300

/**
 * The shard locks granted in this database. Advisory locks are per database, and pg_locks shows
 * every database's: test files run side by side, each on a database of its own, so another
 * file's cluster must not count.
 */
const THIS_DATABASE_SHARD_LOCKS = `locktype = 'advisory' AND granted AND classid = 2839596291 AND objsubid = 2
  AND objid BETWEEN 1000001 AND ${1_000_000 + SHARDS}
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`

const clusterState = async (databaseUrl: string) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const runners = await client.query("SELECT count(*)::int AS n FROM cluster_runners WHERE healthy")
    const locks = await client.query(`
      SELECT count(*)::int AS shards, count(DISTINCT pid)::int AS holders FROM pg_locks
      WHERE ${THIS_DATABASE_SHARD_LOCKS}`)
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

/**
 * The cluster's state as text, for a failure report: its runners, and every message not yet
 * processed (when it was last read, and whether a reply ends it).
 */
export const describeClusterState = async (databaseUrl: string) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const runners = await client.query(
      "SELECT address, healthy, now() - last_heartbeat AS since_heartbeat FROM cluster_runners ORDER BY address"
    )
    const messages = await client.query(`
      SELECT m.entity_type, m.entity_id, m.tag, m.shard_id, now() - m.last_read AS since_read,
        (SELECT string_agg(r.kind::text, ',') FROM cluster_replies r WHERE r.request_id = m.request_id) AS replies
      FROM cluster_messages m WHERE NOT m.processed ORDER BY m.rowid`)
    const locks = await client.query(`
      SELECT pid, count(*)::int AS shards FROM pg_locks
      WHERE ${THIS_DATABASE_SHARD_LOCKS}
      GROUP BY pid`)
    return [
      `runners: ${JSON.stringify(runners.rows)}`,
      `shard locks by session: ${JSON.stringify(locks.rows)}`,
      `unprocessed messages (${messages.rowCount}):`,
      ...messages.rows.map((row) => JSON.stringify(row))
    ].join("\n")
  } finally {
    await client.end()
  }
}
