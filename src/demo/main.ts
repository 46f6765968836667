/**
 * The demo model: `npm run demo-model`. A model provider to try the platform without a key: it
 * serves the OpenAI Responses and Chat Completions formats on HOST:PORT (127.0.0.1:8788 unless
 * set), answers deterministically, streams slowly and calls tools when asked
 * (docs/demo-model.md). Ctrl-C stops it.
 */
import { HttpRouter, HttpServer } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { NetAddress } from "effect/net"
import { Cause, Config, Console, Effect, Layer, Option } from "effect"
import { createServer } from "node:http"
import { runMain } from "../process/RunMain.ts"
import { DEMO_MODEL_SLUG, DemoRoutes } from "./DemoServer.ts"

const DemoConfig = Config.all({
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.Int("PORT").pipe(Config.withDefault(8788))
})

const Listener = Layer.unwrap(
  Effect.map(DemoConfig, ({ host, port }) => NodeHttpServer.layer(createServer, { host, port }))
)

const Announce = Layer.effectDiscard(
  Effect.flatMap(HttpServer.HttpServer, (server) => {
    const address = server.address as NetAddress.InetAddress
    return Console.log(
      `Demo model listening on http://${NetAddress.formatHost(address)}:${address.port}/v1 ` +
        `(api_format openai-responses or openai-chat-completions, model slug "${DEMO_MODEL_SLUG}" or any, any API key)`
    )
  })
)

HttpRouter.serve(DemoRoutes, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.merge(Announce),
  Layer.provide(Listener),
  Layer.launch,
  Effect.tapCause((cause) =>
    Effect.flatMap(DemoConfig, ({ host, port }) =>
      Console.error(
        Option.exists(
            Cause.findErrorOption(cause),
            (error) => typeof error === "object" && error !== null && "cause" in error && (error.cause as { code?: unknown } | undefined)?.code === "EADDRINUSE"
          )
          ? `${host}:${port} is in use; set PORT (e.g. PORT=8790 npm run demo-model)`
          : Cause.pretty(cause)
      )).pipe(Effect.orDie)
  ),
  runMain({ disableErrorReporting: true })
)
