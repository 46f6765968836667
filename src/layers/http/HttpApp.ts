/**
 * The HTTP app: the Api with its handlers behind the request guards, the OpenAPI document at
 * /v1/openapi.json, the docs page at /docs, a pointer at /, CORS for the configured origins, and
 * one log line per request. docs/api-conventions.md describes what a caller sees.
 */
import {
  Etag,
  FileSystem,
  HttpApi,
  HttpApiBuilder,
  HttpApiScalar,
  HttpMiddleware,
  HttpPlatform,
  HttpServer,
  Path
} from "@effect/platform"
import { Effect, Layer } from "effect"
import { MachineRegistrationLive, RegistrationAuthenticationLive } from "../../api/handlers/machines/MachineRegistrationLive.ts"
import { MachinesLive } from "../../api/handlers/machines/MachinesLive.ts"
import { ActorsLive } from "../../api/handlers/runtime/ActorsLive.ts"
import { AgentConfigsLive } from "../../api/handlers/configuration/AgentConfigsLive.ts"
import { AgentEventStreamLive } from "../../api/handlers/runtime/AgentEventStreamLive.ts"
import { AgentsLive } from "../../api/handlers/runtime/AgentsLive.ts"
import { AuthenticationLive } from "../../api/handlers/AuthenticationLive.ts"
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
import { UserLive } from "../../api/handlers/tenancy/UserLive.ts"
import { ListenAddress } from "../../services/shared/ListenAddress.ts"
import { UserSettingsLive } from "../../api/handlers/workspaces/UserSettingsLive.ts"
import { WorkspacesLive } from "../../api/handlers/workspaces/WorkspacesLive.ts"
import { AppConfig } from "../AppConfig.ts"
import { builtWithOnly } from "./BuiltWithOnly.ts"
import { corsFor } from "./Cors.ts"
import { MachineSocketRouteLive } from "./MachineSocketRoute.ts"
import { ServedApi } from "./OpenApiDocument.ts"
import { RequestGuards } from "./RequestGuards.ts"
import { requestLog } from "./RequestLog.ts"
import { DOCS_PATH, OPENAPI_PATH, RootPageLive } from "./RootPage.ts"

const HandlersLive = Layer.mergeAll(
  HealthLive,
  UserLive,
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
  Layer.provide(Layer.mergeAll(AuthenticationLive, StreamAuthenticationLive, RegistrationAuthenticationLive))
)

/** Tells ListenAddress where the listener listens. */
const ListenAddressRecorded = Layer.effectDiscard(Effect.gen(function*() {
  const { address } = yield* HttpServer.HttpServer
  if (address._tag === "TcpAddress") yield* (yield* ListenAddress).listen(address.hostname, address.port)
}))

/** The Api with its routes, docs and guards; needs AppConfig, an HttpServer and the services. */
export const HttpAppLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    HttpApiBuilder.serve((app) => requestLog(corsFor(config.corsOrigins)(app))).pipe(
      // Every request starts in the context the server is built in: what the server needs, not
      // every service (each handler group adds its own, BuiltWithOnly.ts).
      builtWithOnly(HttpServer.HttpServer, HttpApi.Api, HttpPlatform.HttpPlatform, FileSystem.FileSystem, Path.Path, Etag.Generator)
    ))
).pipe(
  Layer.provide(HttpApiScalar.layer({ path: DOCS_PATH })),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: OPENAPI_PATH })),
  Layer.provide(RootPageLive),
  Layer.provide(MachineSocketRouteLive),
  Layer.provide(RequestGuards),
  Layer.provide(HttpApiBuilder.api(ServedApi).pipe(Layer.provide(HandlersLive))),
  // Request spans cost a third of the throughput and nothing exports them.
  HttpMiddleware.withTracerDisabledWhen(() => true),
  Layer.merge(ListenAddressRecorded)
)
