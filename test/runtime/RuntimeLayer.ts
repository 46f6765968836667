/**
 * The layer of the runtime tests: the real server over a real database (test/support/TestApp.ts),
 * the scripted provider on loopback, and model retries with short delays.
 */
import { layer } from "@effect/vitest"
import { Duration, Layer } from "effect"
import { ModelClient, ModelRetryPolicy } from "../../src/services/runtime/model/ModelClient.ts"
import { ScriptedProvider } from "../support/ScriptedProvider.ts"
import type { AppConfigShape } from "../../src/layers/AppConfig.ts"
import { TestAppLive, testConfig } from "../support/TestApp.ts"

export const fastRetries = Layer.succeed(ModelRetryPolicy, {
  maxAttempts: 3,
  initialDelay: Duration.millis(20),
  maxDelay: Duration.millis(100),
  maxRetryAfter: Duration.seconds(1)
})

/** The model client alone (for the adapter tests), with the test configuration (private targets allowed). */
export const TestModelClient = ModelClient.layer.pipe(Layer.provide(testConfig()))

/** The runtime test app, its configuration changed by `overrides`. */
const runtimeTestLive = (overrides: Partial<AppConfigShape> = {}) =>
  Layer.mergeAll(TestAppLive(overrides), ScriptedProvider.layer).pipe(Layer.provide(fastRetries))

/** A describe block over one runtime test app (the real clock, as describeApp in test/support/TestApp.ts). */
export const describeRuntime = (timeout: Duration.Input = "60 seconds", overrides: Partial<AppConfigShape> = {}) =>
  layer(runtimeTestLive(overrides), { timeout, excludeTestServices: true })
