/**
 * The HTTP app: the Api with its handlers behind the request guards, the OpenAPI document at
 * /v1/openapi.json, the docs page at /docs, a pointer at /, CORS for the configured origins, and
 * one log line per request. docs/api-conventions.md describes what a caller sees.
 */
import { HttpMiddleware, HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder, HttpApiScalar } from "effect/http-api"
import { NetAddress } from "effect/net"
import { Effect, Layer } from "effect"
import { MachineRegistrationLive, RegistrationAuthenticationLive } from "../../api/handlers/machines/MachineRegistrationLive.ts"
import { MachinesLive } from "../../api/handlers/machines/MachinesLive.ts"
import { ActorsLive } from "../../api/handlers/runtime/ActorsLive.ts"
import { AgentConfigsLive } from "../../api/handlers/configuration/AgentConfigsLive.ts"
import { AgentEventStreamLive } from "../../api/handlers/runtime/AgentEventStreamLive.ts"
import { AgentsLive } from "../../api/handlers/runtime/AgentsLive.ts"
import { AuthenticationLive, BearerAuthenticationLive } from "../../api/handlers/AuthenticationLive.ts"
import { HealthLive } from "../../api/handlers/HealthLive.ts"
import { StreamAuthenticationLive } from "../../api/handlers/StreamAuthenticationLive.ts"
import { InteractionsLive } from "../../api/handlers/runtime/InteractionsLive.ts"
import { InvitationsLive } from "../../api/handlers/tenancy/InvitationsLive.ts"
import { MembersLive } from "../../api/handlers/tenancy/MembersLive.ts"
import { ModelProviderConfigsLive } from "../../api/handlers/configuration/ModelProviderConfigsLive.ts"
import { ModelsLive } from "../../api/handlers/configuration/ModelsLive.ts"
import { MachinePoolsLive } from "../../api/handlers/machines/MachinePoolsLive.ts"
import { OrganizationApiKeysLive } from "../../api/handlers/tenancy/OrganizationApiKeysLive.ts"
import { OrganizationsLive } from "../../api/handlers/tenancy/OrganizationsLive.ts"
import { ProjectMembersLive } from "../../api/handlers/tenancy/ProjectMembersLive.ts"
import { ProjectsLive } from "../../api/handlers/tenancy/ProjectsLive.ts"
import { SecretsLive } from "../../api/handlers/configuration/SecretsLive.ts"
import { SkillsLive } from "../../api/handlers/configuration/SkillsLive.ts"
import { ToolCallsLive } from "../../api/handlers/runtime/ToolCallsLive.ts"
import { BrowserSessionsLive } from "../../api/handlers/tenancy/BrowserSessionsLive.ts"
import { UserLive } from "../../api/handlers/tenancy/UserLive.ts"
import { ListenAddress } from "../../services/shared/ListenAddress.ts"
import { UserSettingsLive } from "../../api/handlers/workspaces/UserSettingsLive.ts"
import { WorkspacesLive } from "../../api/handlers/workspaces/WorkspacesLive.ts"
import { AppConfig } from "../AppConfig.ts"
import { builtWithOnly } from "./BuiltWithOnly.ts"
import { LongLivedConnectionsClosedAtShutdown } from "./ClosedAtShutdown.ts"
import { corsFor } from "./Cors.ts"
import { MachineSocketRouteLive } from "./MachineSocketRoute.ts"
import { ServedApi } from "./OpenApiDocument.ts"
import { ApiErrorsLive, guarded } from "./RequestGuards.ts"
import { requestLog } from "./RequestLog.ts"
import { DOCS_PATH, OPENAPI_PATH, RootPageLive } from "./RootPage.ts"
import { ROUTER_CONFIG } from "./RouteTable.ts"

const HandlersLive = Layer.mergeAll(
  HealthLive,
  UserLive,
  BrowserSessionsLive,
  UserSettingsLive,
  WorkspacesLive,
  OrganizationsLive,
  OrganizationApiKeysLive,
  MembersLive,
  InvitationsLive,
  ProjectsLive,
  ProjectMembersLive,
  SecretsLive,
  ModelProviderConfigsLive,
  ModelsLive,
  MachinePoolsLive,
  SkillsLive,
  AgentConfigsLive,
  AgentsLive,
  AgentEventStreamLive,
  ToolCallsLive,
  InteractionsLive,
  ActorsLive,
  MachinesLive,
  MachineRegistrationLive
).pipe(
  Layer.provide(Layer.mergeAll(ApiErrorsLive, AuthenticationLive, BearerAuthenticationLive, StreamAuthenticationLive, RegistrationAuthenticationLive))
)

/** Every route: the Api's, its OpenAPI document and docs page, the root page, the machines' WebSocket (the last four also in OtherRoutes.ts). */
const RoutesLive = Layer.mergeAll(
  HttpApiBuilder.layer(ServedApi, { openapiPath: OPENAPI_PATH }).pipe(Layer.provide(HandlersLive)),
  HttpApiScalar.layer(ServedApi, { path: DOCS_PATH }),
  RootPageLive,
  MachineSocketRouteLive
)

/** Tells ListenAddress where the listener listens. */
const ListenAddressRecorded = Layer.effectDiscard(Effect.gen(function*() {
  const { address } = yield* HttpServer.HttpServer
  if (NetAddress.isInetAddress(address)) yield* (yield* ListenAddress).listen(NetAddress.formatHost(address), address.port)
}))

/**
 * The Api with its routes, docs and guards; needs AppConfig, an HttpServer and the services. The
 * routes are built in the context of the services; the listener runs every request with the
 * router behind the guards, CORS and the request log, in a context that holds only the server
 * (BuiltWithOnly.ts): each handler group adds its own. They wrap the router rather than being
 * the listener's middleware, which effect/http would run as a step of its own (RequestLog.ts).
 */
const ServedApp = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const router = yield* HttpRouter.toHttpEffect(RoutesLive).pipe(Effect.provideService(HttpRouter.RouterConfig, ROUTER_CONFIG))
    return HttpServer.serve(requestLog(corsFor(config.corsOrigins)(guarded(router)))).pipe(
      builtWithOnly(HttpServer.HttpServer)
    )
  })
)

/** The served app; at shutdown the machines' sockets and the event streams end before its listener drains. */
export const HttpAppLive = LongLivedConnectionsClosedAtShutdown.pipe(
  Layer.provideMerge(ServedApp),
  // Request spans cost a third of the throughput and nothing exports them.
  Layer.provide(Layer.succeed(HttpMiddleware.TracerDisabledWhen, () => true)),
  Layer.merge(ListenAddressRecorded)
)
