/**
 * A layer built in a context that holds only the services it names, taken from the context it is
 * built in. The HTTP server's layer and each handler group keep the context they were built in
 * and run every request in it (`HttpServer.serve`, `HttpApiBuilder.group`), and Effect copies a
 * request's context whenever a service is provided on its way: built over all of the server's
 * services (61), an authenticated GET visited about 500 entries (docs/performance-record.md, "What the
 * size of the context costs"). `Layer.provide` cannot narrow a context (it merges the one it is
 * built in with what it provides), so the layer is built here, with the same memo map (a layer it
 * shares with the rest is still built once), in the picked context. The names are checked against
 * what the layer's type requires: a layer that needs a service it does not name does not compile.
 * Routes added to the router by other layers (the root page, the docs, the OpenAPI document, the
 * machines' WebSocket) declare nothing there; they take their services when they are built and
 * need only the request's own at run time, and the tests call each of them.
 *
 * Effect 4 keeps the runtime's settings in the context too (the loggers, the minimum log level,
 * tracing, the clock, the scheduler), where Effect 3 kept them beside it, in fiber refs: those
 * present are kept, as Effect 3 kept them, so a request still logs with the server's loggers.
 */
import { HttpMiddleware } from "effect/http"
import { Clock, Context, Effect, Layer, Random, References, Scheduler, Tracer } from "effect"

/** The runtime's own settings: references of Effect's runtime modules. */
const RUNTIME_REFERENCES: ReadonlyArray<Context.Key<any, any>> = [References, Tracer, Scheduler, Clock, Random, HttpMiddleware]
  .flatMap((module) => Object.values(module))
  .filter((value): value is Context.Key<any, any> => Context.isKey(value) && Context.isReference(value))

export const builtWithOnly = <const Services extends ReadonlyArray<Context.Key<any, any>>>(...services: Services) =>
<A, E>(
  layer: Layer.Layer<A, E, Services[number]["Identifier"]>
): Layer.Layer<A, E, Services[number]["Identifier"]> =>
  Layer.effectContext(Effect.gen(function*() {
    const context = yield* Effect.context<Services[number]["Identifier"]>()
    let picked = Context.pick(...services)(context) as Context.Context<unknown>
    for (const reference of RUNTIME_REFERENCES) {
      const value = Context.getOrUndefined(context as Context.Context<unknown>, reference)
      if (context.mapUnsafe.has(reference.key)) picked = Context.add(picked, reference, value)
    }
    const memoMap = yield* Layer.CurrentMemoMap
    const scope = yield* Effect.scope
    return yield* Effect.updateContext(Layer.buildWithMemoMap(layer, memoMap, scope), (_: Context.Context<never>) => picked)
  }))
