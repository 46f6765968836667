/**
 * A layer built in a context that holds only the services it names, taken from the context it is
 * built in. The HTTP server's layer and each handler group keep the context they were built in
 * and run every request in it (`HttpServer.serve`, `HttpApiBuilder.group`), and Effect copies a
 * request's context whenever a service is provided on its way, and compares it entry by entry when
 * a fiber sets it to one of the same size: built over all of the server's services (61), an
 * authenticated GET visited about 500 entries (docs/performance.md, "What the size of the
 * context costs"). `Layer.provide` cannot narrow a context (it merges the one it is built in with
 * what it provides), so the layer is built here, with the same memo map (a layer it shares with
 * the rest is still built once), in the picked context. The names are checked against what the
 * layer's type requires: a layer that needs a service it does not name does not compile. Routes
 * added to `HttpApiBuilder.Router` by other layers (the root page, the docs, the OpenAPI document,
 * the machines' WebSocket) declare nothing there; they take their services when they are built and
 * need only the request's own at run time, and the tests call each of them.
 */
import { Context, Effect, Layer } from "effect"

export const builtWithOnly = <const Services extends ReadonlyArray<Context.Tag<any, any>>>(...services: Services) =>
<A, E>(
  layer: Layer.Layer<A, E, Context.Tag.Identifier<Services[number]>>
): Layer.Layer<A, E, Context.Tag.Identifier<Services[number]>> =>
  Layer.scopedContext(Effect.gen(function*() {
    const picked = Context.pick(...services)(yield* Effect.context<Context.Tag.Identifier<Services[number]>>())
    const memoMap = yield* Layer.CurrentMemoMap
    const scope = yield* Effect.scope
    return yield* Effect.mapInputContext(Layer.buildWithMemoMap(layer, memoMap, scope), (_: Context.Context<never>) => picked)
  }))
