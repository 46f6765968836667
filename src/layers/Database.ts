/**
 * The database: a real Postgres when DATABASE_URL is set, else the embedded PGlite (real Postgres
 * in WASM) in DATA_DIR, which the same `@effect/sql-pg` driver talks to over an in-process stream
 * (PgliteConnection.ts). PGlite is a single session, so its pool holds exactly one connection
 * (docs/operations.md). On Postgres, the short statements of the hot paths outside a transaction
 * (reads, and the appends and the workflow engine's writes that are one statement) go to a second
 * pool of two connections, which the statements of different fibers share, pipelined
 * (PipelinedStatements). On both, every connection prepares its statements and keeps up to
 * MAX_PREPARED_TEXTS of them (the driver's cache); an interrupted statement is cancelled with a
 * CancelRequest on a side connection, and its connection retired unless Postgres confirms the
 * cancel (the driver's own behaviour; a pipelined statement is not cancelled: it runs to its end,
 * its answer dropped). On the embedded database, which only this process uses, the principals of
 * requests are kept until a change to the tables they are read from (PrincipalCache); on Postgres
 * they are not. On shutdown the pool closes first, then PGlite flushes and closes, so the data
 * directory is never left half-written.
 *
 * PGlite must never be opened by two processes at once (both would write the same files): the
 * embedded database holds an exclusive lock file, DATA_DIR/pg.lock, holding the owner's pid, for
 * as long as it is open. A second process fails at start; a lock left by a process that is no
 * longer alive (killed with SIGKILL, a crash) is taken over.
 */
import { PGlite } from "@electric-sql/pglite"
import { PgClient, PgTypes } from "@effect/sql-pg"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient } from "effect/sql"
import { ConnectionError, SqlError } from "effect/sql/SqlError"
import { Data, Duration, Effect, Fiber, Layer, Option, Redacted, Result, Scope } from "effect"
import { mkdirSync } from "node:fs"
import { join, resolve } from "node:path"
import { type AppConfigShape, AppConfig } from "./AppConfig.ts"
import { DATABASE_DIRECTORY, LOCK_FILE, prepareDataDir, tightenDatabaseDirectory, unusable } from "./DataDir.ts"
import { pgliteConnections } from "./PgliteConnection.ts"
import { holdPidLockFile } from "../process/PidLockFile.ts"
import { PipelinedStatements } from "../services/shared/PipelinedStatements.ts"
import { ACCESS_CHANGES_CHANNEL, PrincipalCache } from "../services/tenancy/PrincipalCache.ts"

export class DataDirectoryInUse extends Data.TaggedError("DataDirectoryInUse")<{
  readonly message: string
}> {}

/**
 * The most statements a connection keeps prepared (the driver's `preparedStatementCacheSize`,
 * 100 by default): a turn's statements are the same few dozen texts over and over, and Postgres
 * parses and plans a prepared one once per connection (docs/performance-record.md, "Prepared
 * statements"). Beyond it, the least recently used statement is closed.
 */
export const MAX_PREPARED_TEXTS = 1_000

/**
 * The largest message the client takes from the database (the driver's `maxMessageSize`, 16 MiB
 * by default, which failed every read of a larger row: a stored result became unreadable for
 * good). The largest row the platform writes is a machine request's: its operation (a file
 * written through the files route, 10 MiB of text escaped up to six bytes a character in jsonb's
 * text, or a checkpoint restored, 32 MiB in base64) and its outcome (at most
 * OUTCOME_MAX_BYTES.other, 64 MiB, domain/machines/MessageSizes.ts), under 130 MiB together; twice that leaves
 * room. A message is read into memory whole only as large as it is.
 */
export const MAX_MESSAGE_BYTES = 256 * 1024 * 1024

/** The microseconds between the Unix epoch and Postgres's (2000-01-01). */
const PG_EPOCH_SECONDS = 946_684_800
const INT32_MAX = 2_147_483_647

const pad = (value: number, size: number) => String(value).padStart(size, "0")

/**
 * A `timestamptz` (microseconds since 2000-01-01 UTC, as the binary protocol sends it) as Postgres
 * writes it in UTC: `2026-11-23 08:50:36.123456+00`, the fraction without trailing zeros, none
 * when whole; `infinity` and `-infinity` for Postgres's two.
 */
const readTimestampAsWritten = (bytes: Uint8Array, offset: number, size: number): Result.Result<string, PgTypes.CodecError> => {
  if (size !== 8) return Result.fail(new PgTypes.CodecError({ message: `timestamptz has ${size} bytes, not 8` }))
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, 8)
  const high = view.getInt32(0)
  const low = view.getUint32(4)
  if (high === INT32_MAX && low === 0xffff_ffff) return Result.succeed("infinity")
  if (high === -INT32_MAX - 1 && low === 0) return Result.succeed("-infinity")
  const micros = view.getBigInt64(0)
  const seconds = micros / 1_000_000n - (micros % 1_000_000n < 0n ? 1n : 0n)
  const fraction = Number(micros - seconds * 1_000_000n)
  const date = new Date((Number(seconds) + PG_EPOCH_SECONDS) * 1000)
  const year = date.getUTCFullYear()
  const text = `${pad(year > 0 ? year : 1 - year, 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)} ` +
    `${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}` +
    (fraction === 0 ? "" : "." + pad(fraction, 6).replace(/0+$/, "")) + "+00" + (year > 0 ? "" : " BC")
  return Result.succeed(text)
}

/**
 * `timestamptz` columns arrive as text, as Postgres writes them (`2026-11-23 08:50:36.123+00`),
 * which the domain's `Timestamp` decodes into a Date; a Date sent as a parameter is written as
 * the driver writes it.
 */
const timestampAsWritten: PgTypes.Codec<unknown> = {
  encode: (value) => PgTypes.encode(value, PgTypes.OID.timestamptz),
  decode: (bytes) => readTimestampAsWritten(bytes, 0, bytes.length),
  read: readTimestampAsWritten
}

/**
 * `int8` (counts, sequences, token totals) arrives as a number when it is one exactly; a larger
 * one (the workflow engine's 64-bit message ids) as its decimal text. As a parameter it takes a
 * bigint (the driver sends an integer beyond 32 bits as one), a number or decimal text.
 */
const int8AsNumberWhenExact: PgTypes.Codec<unknown> = {
  encode: (value) =>
    PgTypes.encode(
      typeof value === "bigint" ? value : typeof value === "number" || typeof value === "string" ? BigInt(value) : value,
      PgTypes.OID.int8
    ),
  decode: (bytes) => {
    if (bytes.length !== 8) return Result.fail(new PgTypes.CodecError({ message: `int8 has ${bytes.length} bytes, not 8` }))
    const value = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigInt64(0)
    const exact = Number(value)
    return Result.succeed(Number.isSafeInteger(exact) ? exact : String(value))
  }
}

/** How column values arrive, for both databases (docs/architecture.md, "Rows"). */
const makeTypes = (): PgTypes.Registry => {
  const types = PgTypes.makeRegistry()
  types.register(PgTypes.OID.timestamptz, timestampAsWritten)
  types.register(PgTypes.OID.int8, int8AsNumberWhenExact)
  return types
}

/** Holds DATA_DIR/pg.lock for the life of the scope (process/PidLockFile.ts). */
const lockDataDirectory = (dataDir: string) => {
  const lockFile = resolve(dataDir, LOCK_FILE)
  return prepareDataDir(dataDir).pipe(
    Effect.andThen(holdPidLockFile(lockFile, {
      inUse: (owner) =>
        new DataDirectoryInUse({
          message: `The data directory ${dataDir} is in use by ${owner === undefined ? "another process" : `process ${owner}`} ` +
            `(lock file ${lockFile}): the embedded database can be opened by one process at a time. ` +
            `Stop that process, or set DATABASE_URL to use a PostgreSQL server.`
        }),
      unusable: (cause) => unusable("lock", lockFile, cause)
    }))
  )
}

/**
 * The client over a pool, checked with one statement within 5 s (a database that cannot be
 * reached stops the start-up), its pool closed when the scope closes. The close is waited for at
 * most a second (the pool waits for every connection still checked out to come back): a holder
 * that outlives the database's scope does not hold the shutdown, the pool finishes closing when
 * it lets go.
 */
const checkedClient = (options: PgClient.PgPoolConfig) =>
  Effect.gen(function*() {
    const poolScope = yield* Scope.make()
    yield* Effect.addFinalizer((exit) =>
      Effect.forkDetach(Scope.close(poolScope, exit)).pipe(
        Effect.flatMap((closing) => Fiber.await(closing).pipe(Effect.timeoutOption(1000)))
      )
    )
    const client = yield* PgClient.make({
      ...options,
      types: makeTypes(),
      preparedStatementCacheSize: MAX_PREPARED_TEXTS,
      maxMessageSize: MAX_MESSAGE_BYTES
    }).pipe(
      Scope.provide(poolScope)
    )
    yield* client`SELECT 1`.pipe(
      Effect.timeoutOrElse({
        duration: Duration.seconds(5),
        orElse: () =>
          Effect.fail(
            new SqlError({
              reason: new ConnectionError({
                cause: new Error("Connection timed out"),
                message: "PgClient: Connection timed out",
                operation: "connect"
              })
            })
          )
      })
    )
    return client
  })

const embedded = (dataDir: string) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const inMemory = dataDir === "memory://"
      const location = inMemory ? dataDir : join(dataDir, DATABASE_DIRECTORY)
      if (!inMemory) {
        yield* lockDataDirectory(dataDir)
        mkdirSync(location, { recursive: true, mode: 0o700 })
        // PGlite makes its files 0666 whatever the umask: what it made while open, once it has closed.
        yield* Effect.addFinalizer(() =>
          tightenDatabaseDirectory(dataDir).pipe(Effect.ignore({
            log: "Warn",
            message: `The embedded database's files in ${location} could not be made private again at shutdown; ` +
              "they are made private at the next start"
          }))
        )
      }
      // Creating a new database takes seconds: a start-up says what it is waiting for.
      yield* Effect.logInfo(`opening the embedded database in ${location}`)
      const db = yield* Effect.acquireRelease(
        Effect.promise(() => PGlite.create(location)),
        (db) => Effect.promise(() => db.close())
      )
      // And the files of a database it has just created.
      if (!inMemory) yield* tightenDatabaseDirectory(dataDir)
      // This process is its only client: principals are kept until a change to what they are read from.
      const principals = PrincipalCache.keeping()
      yield* Effect.promise(() => db.exec(`LISTEN ${ACCESS_CHANGES_CHANNEL}`))
      const onNotification = (channel: string) => {
        if (channel === ACCESS_CHANGES_CHANNEL) principals.forgetAll()
      }
      // Its one connection stays open when idle (in the process, it holds nothing a close would
      // free) and keeps the statements it prepared; the pipelined statements run on it too.
      return Layer.effect(PipelinedStatements, Effect.map(SqlClient.SqlClient, PipelinedStatements.direct)).pipe(
        Layer.merge(Layer.succeed(PrincipalCache, principals.cache)),
        Layer.provideMerge(PgClient.layerFrom(checkedClient({
          stream: pgliteConnections(db, onNotification),
          ssl: false,
          minConnections: 1,
          maxConnections: 1,
          username: "postgres",
          database: "postgres"
        })))
      )
    })
  )

/** Connections to a Postgres server per process, besides the pipelined statements'. */
const POSTGRES_POOL_SIZE = 10

/** Connections per process that the pipelined statements share (each carries up to 32 at once). */
const PIPELINED_POOL_SIZE = 2

/** How the pipelined statements' connections show in `pg_stat_activity`. */
export const PIPELINED_APPLICATION_NAME = "agent-platform pipelined statements"

/** An idle connection of either pool is closed after this. */
const POSTGRES_IDLE_TIMEOUT = Duration.seconds(10)

/** The pipelined statements of a Postgres server at `url`: a pool of their own, its connections shared. */
const pipelinedStatements = (url: Redacted.Redacted) =>
  Layer.effect(
    PipelinedStatements,
    Effect.gen(function*() {
      const main = yield* SqlClient.SqlClient
      const pipelined = yield* checkedClient({
        url,
        multiplex: true,
        maxConnections: PIPELINED_POOL_SIZE,
        idleTimeout: POSTGRES_IDLE_TIMEOUT,
        applicationName: PIPELINED_APPLICATION_NAME
      })
      return PipelinedStatements.make(main, pipelined)
    })
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * The client of a Postgres server at `url`: a pool of POSTGRES_POOL_SIZE connections, each
 * statement on one of its own, and the pipelined statements' pool.
 */
const postgres = (url: Redacted.Redacted) =>
  pipelinedStatements(url).pipe(
    Layer.merge(Layer.succeed(PrincipalCache, PrincipalCache.none)),
    Layer.provideMerge(PgClient.layerFrom(checkedClient({
      url,
      maxConnections: POSTGRES_POOL_SIZE,
      idleTimeout: POSTGRES_IDLE_TIMEOUT
    })))
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

export const DatabaseLive = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    Option.match(config.databaseUrl, {
      onSome: postgres,
      onNone: () => embedded(config.dataDir)
    }))
)
