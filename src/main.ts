/**
 * The server: `npm start`. Configuration from the environment (README, ARCHITECTURE.md 6).
 * SIGTERM or SIGINT stops accepting, lets in-flight requests finish, then closes the database.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { AppConfig } from "./layers/AppConfig.ts"
import { ServerLive } from "./layers/AppLive.ts"
import { JsonLogsLive } from "./layers/Logging.ts"

ServerLive.pipe(
  Layer.provide(AppConfig.fromEnv),
  Layer.provide(JsonLogsLive),
  Layer.launch,
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
