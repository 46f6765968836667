/**
 * What the process says when it starts and stops (docs/operations.md):
 * - the port is checked before anything else is done (before DATA_DIR is created or a database
 *   opened), and a port in use stops the process with one line;
 * - once listening, one line with the address, the docs page, the OpenAPI document and the
 *   database in use;
 * - a start-up failure an operator can fix (a port or a data directory in use, a data directory
 *   that cannot be created, another server on the database, a bad variable) is one plain line
 *   on stderr, not a stack trace;
 * - "stopped" once everything has closed.
 */
import { HttpServer, HttpServerError } from "effect/http"
import { Cause, Config, Data, Effect, Layer, Schema, SchemaIssue } from "effect"
import { createServer } from "node:net"
import { AppConfig } from "./AppConfig.ts"
import { DataDirectoryInUse, describeDatabase } from "./Database.ts"
import { DataDirectoryUnusable } from "./DataDir.ts"
import { DOCS_PATH, OPENAPI_PATH } from "./http/RootPage.ts"
import { ClusterPoolsRefused } from "../services/machines/ClusterPools.ts"
import { InvalidSecretKey } from "./SecretKey.ts"
import { RunnerAddressUnavailable } from "./cluster/SocketRunnerCluster.ts"

class PortInUse extends Data.TaggedError("PortInUse")<{ readonly message: string }> {}

const portInUse = (port: number) => new PortInUse({ message: `port ${port} is in use; set PORT` })

/** Fails with PortInUse when HOST:PORT cannot be listened on (checked by listening, then closing). */
export const PortAvailable = Layer.effectDiscard(
  Effect.flatMap(AppConfig, ({ host, port }) =>
    Effect.callback<void, PortInUse | Error>((resume) => {
      const probe = createServer()
      probe.once("error", (error: NodeJS.ErrnoException) =>
        resume(
          error.code === "EADDRINUSE"
            ? Effect.fail(portInUse(port))
            : Effect.fail(new Error(`cannot listen on ${host}:${port}: ${error.message}`))
        ))
      probe.listen({ host, port, exclusive: true }, () => probe.close(() => resume(Effect.void)))
    }))
)

/** Whether the server got as far as listening (a failed start-up is not "stopped"). */
let listening = false

/** Logs where the server listens, its docs, and the database in use. */
export const withStartupLog = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const server = yield* HttpServer.HttpServer
      const config = yield* AppConfig
      const address = server.address
      const base = address._tag === "UnixPathAddress" ? `unix:${address.path}` : `http://${config.host}:${address.port}`
      listening = true
      yield* Effect.logInfo(
        `Listening on ${base}; API docs at ${base}${DOCS_PATH}, OpenAPI at ${base}${OPENAPI_PATH}; ` +
          `database: ${describeDatabase(config)}`
      )
    })
  ).pipe(Layer.provideMerge(layer))

/** Logs "stopped" when the layers it is provided to have all closed, if the server had started. */
export const StoppedLog = Layer.effectDiscard(
  Effect.addFinalizer(() => Effect.suspend(() => listening ? Effect.logInfo("stopped") : Effect.void))
)

const formatIssue = SchemaIssue.makeFormatterDefault()

/**
 * A configuration problem as one line, the variable named: `(Invalid data at DATABASE_URL: "…")`, as
 * the server has always printed it.
 */
const describeConfigError = (error: Config.ConfigError): string => {
  const cause = error.cause
  if (!Schema.isSchemaError(cause)) return String(cause)
  const issue = cause.issue
  return issue._tag === "Pointer"
    ? `(Invalid data at ${issue.path.map(String).join(".")}: "${formatIssue(issue.issue)}")`
    : `(Invalid data: "${formatIssue(issue)}")`
}

/** The one line to print for a start-up failure an operator can fix, or undefined for a bug. */
export const startupProblem = (cause: Cause.Cause<unknown>): string | undefined => {
  const error = Cause.squash(cause)
  if (
    error instanceof PortInUse || error instanceof DataDirectoryInUse || error instanceof DataDirectoryUnusable ||
    error instanceof RunnerAddressUnavailable || error instanceof InvalidSecretKey || error instanceof ClusterPoolsRefused
  ) return error.message
  if (error instanceof Config.ConfigError) return `configuration: ${describeConfigError(error)}`
  if (error instanceof HttpServerError.ServeError) {
    const cause = error.cause as (NodeJS.ErrnoException & { readonly port?: number }) | undefined
    return cause?.code === "EADDRINUSE" && cause.port !== undefined
      ? portInUse(cause.port).message
      : `cannot listen: ${cause?.message ?? String(error)}`
  }
  return undefined
}
