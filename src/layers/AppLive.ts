/**
 * Composition (docs/architecture.md, "Wiring"): the database, migrated before anything uses it;
 * the capabilities over it, each one layer whose services declare their own dependencies; the
 * bootstrap user; then the HTTP app on a real listener (main) or a test listener (test/support).
 */
import { Layer, References } from "effect"
import { ConfigurationLive } from "../services/configuration/ConfigurationLive.ts"
import { ClusterPools } from "../services/machines/ClusterPools.ts"
import { MachinesLive } from "../services/machines/MachinesLive.ts"
import { RuntimeLive } from "../services/runtime/RuntimeLive.ts"
import { IdGenerator } from "../services/shared/Ids.ts"
import { ListenAddress } from "../services/shared/ListenAddress.ts"
import { Readiness } from "../services/shared/Readiness.ts"
import { Transactions } from "../services/shared/Transactions.ts"
import { TenancyLive } from "../services/tenancy/TenancyLive.ts"
import { WorkspacesLive } from "../services/workspaces/WorkspacesLive.ts"
import { BootstrapLive } from "./Bootstrap.ts"
import { ClusterPoolsLive } from "./ClusterPools.ts"
import { DatabaseLive } from "./Database.ts"
import { HttpAppLive } from "./http/HttpApp.ts"
import { NodeServerLive } from "./http/NodeServer.ts"
import { MigrationsLive } from "./Migrations.ts"
import { SecretKeyCheckLive } from "./SecretKeyCheck.ts"
import { WorkflowEngineLive } from "./WorkflowEngine.ts"
import { withStartupLog } from "./Startup.ts"

/** The SQL client, available only once migrations have run. */
export const DatabaseReadyLive = MigrationsLive.pipe(Layer.provideMerge(DatabaseLive))

/** The kernel every capability uses (id generation, transactions) and the readiness probe. */
const SharedLive = Layer.mergeAll(IdGenerator.layer, Transactions.layer, Readiness.layer, ListenAddress.layer)

/**
 * Every service, over a migrated database whose secrets this server's key opens, with the
 * bootstrap user in place. Needs AppConfig.
 */
export const ServicesLive = Layer.mergeAll(
  SharedLive,
  TenancyLive,
  ConfigurationLive,
  RuntimeLive,
  MachinesLive,
  WorkspacesLive,
  BootstrapLive,
  ClusterPoolsLive.pipe(Layer.provide(ClusterPools.layer)),
  SecretKeyCheckLive
).pipe(
  // Configuration and machines reach pool machines, whose results resolve turns' waits.
  Layer.provide(WorkflowEngineLive),
  Layer.provideMerge(DatabaseReadyLive),
  // Tracing off for everything built from here on (services, their fibers, and, as it is in the
  // services' context, the listener's requests): nothing exports spans, and a span made costs an
  // id, clock reads and its attributes (docs/operations.md).
  Layer.provideMerge(Layer.succeed(References.TracerEnabled, false))
)

/** The HTTP app over the services; needs AppConfig and an HttpServer. */
export const AppLive = HttpAppLive.pipe(Layer.provide(ServicesLive))

/**
 * The server listening on HOST:PORT; needs AppConfig. The services are built before the
 * listener, so on shutdown the listener closes first, letting in-flight requests finish while
 * the database is still open, and the database closes last.
 */
export const ServerLive = NodeServerLive(withStartupLog(HttpAppLive)).pipe(
  Layer.provide(ServicesLive)
)
