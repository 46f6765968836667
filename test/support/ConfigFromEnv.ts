/** The server's settings as it reads them at start-up from `env` alone (README, "Configuration"). */
import { ConfigProvider, Effect, Layer } from "effect"
import { AppConfig } from "../../src/layers/AppConfig.ts"

export const configFromEnv = (env: Record<string, string>) =>
  Effect.provide(Effect.service(AppConfig), AppConfig.fromEnv.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))))
