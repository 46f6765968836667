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

/** Runs `f` with a client of its own connected to `databaseUrl`, closed after. */
const withDatabase = async <A>(databaseUrl: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

const clusterState = (databaseUrl: string) =>
  withDatabase(databaseUrl, async (client) => {
    try {
      const runners = await client.query("SELECT count(*)::int AS n FROM cluster_runners WHERE healthy")
      const locks = await client.query(`
        SELECT count(*)::int AS shards, count(DISTINCT pid)::int AS holders FROM pg_locks
        WHERE ${THIS_DATABASE_SHARD_LOCKS}`)
      return { runners: runners.rows[0].n as number, ...(locks.rows[0] as { shards: number; holders: number }) }
    } catch {
      // The cluster's tables do not exist before the first runner has started.
      return { runners: 0, shards: 0, holders: 0 }
    }
  })

type ClusterState = Awaited<ReturnType<typeof clusterState>>

const settle = async (databaseUrl: string, settled: (state: ClusterState) => boolean, what: string, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const state = await clusterState(databaseUrl)
    if (settled(state)) return
    if (Date.now() > deadline) throw new Error(`the cluster did not settle on ${what} within ${timeoutMs} ms: ${JSON.stringify(state)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

export const waitForShards = (databaseUrl: string, runners: number, timeoutMs = 120_000) =>
  settle(
    databaseUrl,
    (state) => state.runners === runners && state.shards === SHARDS && state.holders === runners,
    `${runners} runners`,
    timeoutMs
  )

/**
 * After a process died: waits until every shard is held by `holders` database sessions, the
 * survivors'. The dead runner's registration may still read healthy meanwhile.
 */
export const waitForShardsHeldBy = (databaseUrl: string, holders: number, timeoutMs = 120_000) =>
  settle(databaseUrl, (state) => state.shards === SHARDS && state.holders === holders, `shards held by ${holders} sessions`, timeoutMs)

/**
 * The database session (its pid) holding the shard of each turn's workflow, found by the
 * workflow's `run` message (a shard "default:n" is the lock 1000000 + n); a turn whose shard no
 * session holds is left out.
 */
export const turnShardHolders = (databaseUrl: string, turnIds: ReadonlyArray<string>): Promise<Map<string, number>> =>
  withDatabase(databaseUrl, async (client) => {
    const held = await client.query<{ turn_id: string; pid: number }>(
      `SELECT m.payload::json->>'turn_id' AS turn_id, l.pid FROM cluster_messages m
        JOIN (SELECT pid, objid FROM pg_locks WHERE ${THIS_DATABASE_SHARD_LOCKS}) l
          ON l.objid = 1000000 + split_part(m.shard_id, ':', 2)::int
        WHERE m.entity_type = 'Workflow/AgentTurn' AND m.tag = 'run' AND m.payload::json->>'turn_id' = ANY($1)`,
      [turnIds]
    )
    return new Map(held.rows.map((row) => [row.turn_id, row.pid]))
  })

/**
 * The cluster's state as text, for a failure report: its runners, and every message not yet
 * processed (when it was last read, and whether a reply ends it).
 */
export const describeClusterState = (databaseUrl: string) =>
  withDatabase(databaseUrl, async (client) => {
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
  })
