/**
 * The server: `npm start`. Configuration from the environment (README, docs/operations.md).
 * The port is checked first; a start-up failure an operator can fix is one line on stderr and a
 * non-zero exit. SIGTERM or SIGINT stops accepting, lets in-flight requests finish, then closes
 * the database, and logs "stopped"; the same signal again within a second (npm forwards the
 * terminal's Ctrl-C) changes nothing, later it exits at once (process/RunMain.ts).
 */
import { Cause, Effect, Layer } from "effect"
import { AppConfig } from "./layers/AppConfig.ts"
import { ServerLive } from "./layers/AppLive.ts"
import { PortAvailable, startupProblem, StoppedLog } from "./layers/Startup.ts"
import { JsonLogsLive } from "./process/Logging.ts"
import { runMain } from "./process/RunMain.ts"

ServerLive.pipe(
  // Built first (so released last): the port check before DATA_DIR or a database is touched.
  Layer.provide(PortAvailable),
  Layer.provide(StoppedLog),
  Layer.provide(AppConfig.fromEnv),
  Layer.provide(JsonLogsLive),
  Layer.launch,
  Effect.tapCause((cause) =>
    Effect.sync(() => {
      process.stderr.write((startupProblem(cause) ?? Cause.pretty(cause)) + "\n")
    })
  ),
  runMain({ disableErrorReporting: true })
)
