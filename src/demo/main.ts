/**
 * The demo model: `npm run demo-model`. A model provider to try the platform without a key: it
 * serves the OpenAI Responses and Chat Completions formats on HOST:PORT (127.0.0.1:8788 unless
 * set), answers deterministically, streams slowly and calls tools when asked
 * (docs/demo-model.md). Ctrl-C stops it.
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Cause, Config, Console, Effect, Layer, Option } from "effect"
import { createServer } from "node:http"
import { runMain } from "../layers/RunMain.ts"
import { DEMO_MODEL_SLUG, DemoApp } from "./DemoServer.ts"

const DemoConfig = Config.all({
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.integer("PORT").pipe(Config.withDefault(8788))
})

const Listener = Layer.unwrapEffect(
  Effect.map(DemoConfig, ({ host, port }) => NodeHttpServer.layer(createServer, { host, port }))
)

const Announce = Layer.effectDiscard(
  Effect.flatMap(HttpServer.HttpServer, (server) => {
    const address = server.address as HttpServer.TcpAddress
    return Console.log(
      `Demo model listening on http://${address.hostname}:${address.port}/v1 ` +
        `(api_format openai-responses or openai-chat-completions, model slug "${DEMO_MODEL_SLUG}" or any, any API key)`
    )
  })
)

HttpServer.serve(DemoApp).pipe(
  Layer.merge(Announce),
  Layer.provide(Listener),
  Layer.launch,
  Effect.tapErrorCause((cause) =>
    Effect.flatMap(DemoConfig, ({ host, port }) =>
      Console.error(
        Option.exists(Cause.failureOption(cause), (error) => "cause" in error && (error.cause as { code?: unknown } | undefined)?.code === "EADDRINUSE")
          ? `${host}:${port} is in use; set PORT (e.g. PORT=8790 npm run demo-model)`
          : Cause.pretty(cause)
      )).pipe(Effect.orDie)
  ),
  runMain({ disableErrorReporting: true })
)
