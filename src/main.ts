/**
 * The server: `npm start`. Configuration from the environment (README, ARCHITECTURE.md 6).
 * SIGTERM or SIGINT stops accepting, lets in-flight requests finish, then closes the database.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Layer, Logger } from "effect"
import { AppConfig } from "./layers/AppConfig.ts"
import { ServerLive } from "./layers/AppLive.ts"

ServerLive.pipe(
  Layer.provide(AppConfig.fromEnv),
  Layer.provide(Logger.json),
  Layer.launch,
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
