/**
 * Composition: the database (migrated before anything uses it), the services, the bootstrap
 * user; then the HTTP app on a real listener (main) or a test listener (test/support).
 */
import { Layer } from "effect"
import { Access } from "../services/Access.ts"
import { ApiKeys } from "../services/ApiKeys.ts"
import { Invitations } from "../services/Invitations.ts"
import { MemberRemovalGuards } from "../services/MemberRemovalGuards.ts"
import { Members } from "../services/Members.ts"
import { Organizations } from "../services/Organizations.ts"
import { ProjectMembers } from "../services/ProjectMembers.ts"
import { Projects } from "../services/Projects.ts"
import { Users } from "../services/Users.ts"
import { BootstrapLive } from "./Bootstrap.ts"
import { DatabaseLive } from "./Database.ts"
import { HttpAppLive, NodeServerLive } from "./HttpServer.ts"
import { MigrationsLive } from "./Migrations.ts"
import { HttpServer } from "@effect/platform"

/** The SQL client, available only once migrations have run. */
export const DatabaseReadyLive = MigrationsLive.pipe(Layer.provideMerge(DatabaseLive))

const FoundationServicesLive = Layer.mergeAll(
  Users.Default,
  ApiKeys.Default,
  Organizations.Default,
  Projects.Default,
  ProjectMembers.Default,
  Members.Default,
  Invitations.Default
).pipe(Layer.provideMerge(Layer.merge(Access.Default, MemberRemovalGuards.Default)))

/** Every service, over a migrated database, with the bootstrap user in place. Needs AppConfig. */
export const ServicesLive = BootstrapLive.pipe(
  Layer.provideMerge(FoundationServicesLive),
  Layer.provideMerge(DatabaseReadyLive)
)

/** The HTTP app over the services; needs AppConfig and an HttpServer. */
export const AppLive = HttpAppLive.pipe(Layer.provide(ServicesLive))

/** The server listening on HOST:PORT; needs AppConfig. */
export const ServerLive = HttpServer.withLogAddress(AppLive).pipe(Layer.provide(NodeServerLive))
