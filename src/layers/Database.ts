/**
 * The database: a real Postgres when DATABASE_URL is set, else the embedded PGlite (real
 * Postgres in WASM) in DATA_DIR, which the same `@effect/sql-pg` driver talks to over an in-process
 * stream (PgliteConnection.ts). PGlite is a single session, so its pool (PglitePool.ts) holds
 * exactly one connection (docs/operations.md). On both, every connection prepares its statements
 * with parameters (PreparedStatements.ts). On shutdown the pool closes first, then PGlite
 * flushes and closes, so the data directory is never left half-written.
 *
 * PGlite must never be opened by two processes at once (both would write the same files): the
 * embedded database holds an exclusive lock file, DATA_DIR/pg.lock, holding the owner's pid, for
 * as long as it is open. A second process fails at start; a lock left by a process that is no
 * longer alive (killed with SIGKILL, a crash) is taken over.
 */
import { PGlite } from "@electric-sql/pglite"
import { PgClient } from "@effect/sql-pg"
import { SqlError } from "@effect/sql/SqlError"
import { Data, Duration, Effect, Layer, Option, Redacted } from "effect"
import Pg from "pg"
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { type AppConfigShape, AppConfig } from "./AppConfig.ts"
import { CancelSafePool } from "./CancelSafePool.ts"
import { DATABASE_DIRECTORY, LOCK_FILE, prepareDataDir, tightenDatabaseDirectory } from "./DataDir.ts"
import { pgliteConnections } from "./PgliteConnection.ts"
import { PglitePool } from "./PglitePool.ts"
import { PreparingClient } from "./PreparedStatements.ts"
import { isAlive } from "./ProcessLiveness.ts"

export class DataDirectoryInUse extends Data.TaggedError("DataDirectoryInUse")<{
  readonly message: string
}> {}

const TIMESTAMPTZ_OID = 1184
const INT8_OID = 20

const timestampAsWritten = (text: string) => text

const int8AsNumberWhenExact = (text: string) => {
  const value = Number(text)
  return Number.isSafeInteger(value) ? value : text
}

/**
 * How column values arrive, for both databases: `timestamptz` as Postgres writes it
 * (`2026-11-23 08:50:36.123+00`, which the domain's `Timestamp` decodes into a Date) and `int8`
 * (counts, sequences, token totals) as a number when it is one exactly; a larger one (the
 * workflow engine's 64-bit message ids) stays the text Postgres sent. pg asks for each column's
 * parser at every statement: the same two functions each time, not new ones.
 */
const types: Pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => {
    if (oid === TIMESTAMPTZ_OID) return timestampAsWritten
    if (oid === INT8_OID) return int8AsNumberWhenExact
    return Pg.types.getTypeParser(oid, format)
  })
}

const readLockOwner = (lockFile: string): number | undefined => {
  try {
    const pid = Number.parseInt(readFileSync(lockFile, "utf8").trim(), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/** A lock file without a pid yet may be one another process is creating right now. */
const isBeingWritten = (lockFile: string): boolean => {
  try {
    return Date.now() - statSync(lockFile).mtimeMs < 5_000
  } catch {
    return false
  }
}

/** Creates the lock file holding this pid; false when it exists already. */
const createLock = (lockFile: string): boolean => {
  try {
    writeFileSync(lockFile, `${process.pid}\n`, { flag: "wx", mode: 0o600 })
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  }
}

/** The lock files this process holds: a lock naming our own pid is ours only if it is in here. */
const heldLocks = new Set<string>()

/**
 * Holds DATA_DIR/pg.lock for the life of the scope. A lock is stale when its owner is not alive,
 * names this process without being held by it (a pid reused after a restart, as pid 1 in a
 * container), or has held no pid for seconds; a stale lock is replaced, once, and if another
 * process wins that race, it is reported as the owner.
 */
const lockDataDirectory = (dataDir: string) => {
  const lockFile = resolve(dataDir, LOCK_FILE)
  const inUse = (pid: number | undefined) =>
    new DataDirectoryInUse({
      message: `The data directory ${dataDir} is in use by ${pid === undefined ? "another process" : `process ${pid}`} ` +
        `(lock file ${lockFile}): the embedded database can be opened by one process at a time. ` +
        `Stop that process, or set DATABASE_URL to use a PostgreSQL server.`
    })
  const isHeld = (owner: number | undefined) =>
    owner === undefined
      ? isBeingWritten(lockFile)
      : owner === process.pid
      ? heldLocks.has(lockFile)
      : isAlive(owner)
  return Effect.acquireRelease(
    Effect.gen(function*() {
      yield* prepareDataDir(dataDir)
      if (!createLock(lockFile)) {
        const owner = readLockOwner(lockFile)
        if (isHeld(owner)) return yield* Effect.fail(inUse(owner))
        yield* Effect.logWarning(`Replacing the stale lock ${lockFile} of process ${owner ?? "unknown"}`)
        rmSync(lockFile, { force: true })
        if (!createLock(lockFile)) return yield* Effect.fail(inUse(readLockOwner(lockFile)))
      }
      heldLocks.add(lockFile)
    }),
    () =>
      Effect.sync(() => {
        heldLocks.delete(lockFile)
        if (readLockOwner(lockFile) === process.pid) rmSync(lockFile, { force: true })
      })
  )
}

/**
 * A pool as `PgClient.layer` makes one (checked with one query within 5 s, ended when the scope
 * closes), of our own class: a CancelSafePool for a Postgres server (with more than one
 * connection a late cancel can stop another fiber's statement), a PglitePool for the embedded
 * database (a cancel waiting for its one connection held every statement for 5 s).
 */
const checkedPool = (make: () => Pg.Pool) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const pool = make()
        // A connection that fails while idle is removed by the pool; the next statement gets another.
        pool.on("error", () => undefined)
        try {
          await pool.query("SELECT 1")
        } catch (cause) {
          await pool.end()
          throw cause
        }
        return pool
      },
      catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
    }).pipe(
      Effect.timeoutFail({
        duration: Duration.seconds(5),
        onTimeout: () => new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
      })
    ),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
  )

const embedded = (dataDir: string) =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const inMemory = dataDir === "memory://"
      const location = inMemory ? dataDir : join(dataDir, DATABASE_DIRECTORY)
      if (!inMemory) {
        yield* lockDataDirectory(dataDir)
        mkdirSync(location, { recursive: true, mode: 0o700 })
        // PGlite makes its files 0666 whatever the umask: what it made while open, once it has closed.
        yield* Effect.addFinalizer(() => Effect.ignore(tightenDatabaseDirectory(dataDir)))
      }
      // Creating a new database takes seconds: a start-up says what it is waiting for.
      yield* Effect.logInfo(`opening the embedded database in ${location}`)
      const db = yield* Effect.acquireRelease(
        Effect.promise(() => PGlite.create(location)),
        (db) => Effect.promise(() => db.close())
      )
      // And the files of a database it has just created.
      if (!inMemory) yield* tightenDatabaseDirectory(dataDir)
      // Its one connection stays open when idle (in the process, it holds nothing a close would
      // free) and keeps the statements it prepared.
      const pool = () =>
        new PglitePool({
          stream: pgliteConnections(db),
          max: 1,
          idleTimeoutMillis: 0,
          user: "postgres",
          database: "postgres",
          types,
          Client: PreparingClient
        })
      return PgClient.layerFromPool({ acquire: checkedPool(pool), types })
    })
  )

/** Connections to a Postgres server per process. */
const POSTGRES_POOL_SIZE = 10

/** The pool for a Postgres server at `url`. */
const postgresPool = (url: Redacted.Redacted) =>
  checkedPool(() =>
    new CancelSafePool({
      connectionString: Redacted.value(url),
      max: POSTGRES_POOL_SIZE,
      application_name: "@effect/sql-pg",
      types,
      Client: PreparingClient
    })
  )

/** Which database `config` names, for the start-up log: never the password. */
export const describeDatabase = (config: AppConfigShape): string =>
  Option.match(config.databaseUrl, {
    onNone: () => config.dataDir === "memory://" ? "embedded PGlite in memory" : `embedded PGlite in ${resolve(config.dataDir, DATABASE_DIRECTORY)}`,
    onSome: (url) => {
      const { hostname, pathname, port, username } = new URL(Redacted.value(url))
      return `PostgreSQL ${pathname.slice(1) || "postgres"} at ${hostname}:${port || 5432}${username ? ` as ${decodeURIComponent(username)}` : ""}`
    }
  })

export const DatabaseLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.databaseUrl, {
      onSome: (url) => PgClient.layerFromPool({ acquire: postgresPool(url), types }),
      onNone: () => embedded(config.dataDir)
    }))
)
