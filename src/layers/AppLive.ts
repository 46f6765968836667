/**
 * Composition: the database (migrated before anything uses it), the services, the bootstrap
 * user; then the HTTP app on a real listener (main) or a test listener (test/support).
 */
import { Layer } from "effect"
import { Access } from "../services/tenancy/Access.ts"
import { AgentConfigs } from "../services/configuration/AgentConfigs.ts"
import { ApiKeys } from "../services/tenancy/ApiKeys.ts"
import { Invitations } from "../services/tenancy/Invitations.ts"
import { MemberRemovalGuards } from "../services/tenancy/MemberRemovalGuards.ts"
import { Members } from "../services/tenancy/Members.ts"
import { ModelProviderConfigs } from "../services/configuration/ModelProviderConfigs.ts"
import { Models } from "../services/configuration/Models.ts"
import { Organizations } from "../services/tenancy/Organizations.ts"
import { ProjectMembers } from "../services/tenancy/ProjectMembers.ts"
import { Projects } from "../services/tenancy/Projects.ts"
import { Secrets } from "../services/configuration/Secrets.ts"
import { Skills } from "../services/configuration/Skills.ts"
import { Users } from "../services/tenancy/Users.ts"
import { Actors } from "../services/runtime/Actors.ts"
import { AgentCommands } from "../services/runtime/AgentCommands.ts"
import { Agents } from "../services/runtime/Agents.ts"
import { Artifacts } from "../services/runtime/Artifacts.ts"
import { BootstrapLive } from "./Bootstrap.ts"
import { DatabaseLive } from "./Database.ts"
import { HttpAppLive, NodeServerLive } from "./HttpServer.ts"
import { MigrationsLive } from "./Migrations.ts"
import { RuntimeLive, TimelineLive } from "./Runtime.ts"
import { SecretKey } from "./SecretKey.ts"
import { HttpServer } from "@effect/platform"

/** The SQL client, available only once migrations have run. */
export const DatabaseReadyLive = MigrationsLive.pipe(Layer.provideMerge(DatabaseLive))

/** Secrets, model provider configs and models, with the server's secret key. */
const ConfigurationServicesLive = Layer.mergeAll(ModelProviderConfigs.Default, Models.Default).pipe(
  Layer.provideMerge(Secrets.Default),
  Layer.provideMerge(SecretKey.layer)
)

const FoundationServicesLive = Layer.mergeAll(
  Users.Default,
  ApiKeys.Default,
  Organizations.Default,
  Projects.Default,
  ProjectMembers.Default,
  Members.Default,
  Invitations.Default,
  Skills.Default
).pipe(
  Layer.provideMerge(ConfigurationServicesLive),
  Layer.provideMerge(Layer.merge(Access.Default, MemberRemovalGuards.Default))
)

/** What the agents API reads and asks of the engine (the engine, AgentRuntime, is provided below it). */
const AgentApiServicesLive = AgentCommands.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(Agents.Default, Actors.Default, Artifacts.Default))
)

/** Every service, over a migrated database, with the bootstrap user in place. Needs AppConfig. */
export const ServicesLive = BootstrapLive.pipe(
  Layer.provideMerge(AgentApiServicesLive),
  Layer.provideMerge(RuntimeLive),
  Layer.provideMerge(TimelineLive),
  Layer.provideMerge(AgentConfigs.Default),
  Layer.provideMerge(FoundationServicesLive),
  Layer.provideMerge(DatabaseReadyLive)
)

/** The HTTP app over the services; needs AppConfig and an HttpServer. */
export const AppLive = HttpAppLive.pipe(Layer.provide(ServicesLive))

/**
 * The server listening on HOST:PORT; needs AppConfig. The services are built before the
 * listener, so on shutdown the listener closes first, letting in-flight requests finish while
 * the database is still open, and the database closes last.
 */
export const ServerLive = HttpServer.withLogAddress(HttpAppLive).pipe(
  Layer.provide(NodeServerLive),
  Layer.provide(ServicesLive)
)
