/**
 * The minimal server of ../effect3/server.ts on Effect 4 (its own packages: package.json here,
 * installed by bench/frameworks.ts on first use). Run as a child process: DATABASE_URL, HOST and
 * PORT from the environment.
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted, References, Schema } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { createServer } from "node:http"

class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", { error: Schema.String }, { httpApiStatus: 401 }) {}
class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { error: Schema.String }, { httpApiStatus: 404 }) {}

class Caller
  extends Context.Service<Caller, { readonly userId: string | null; readonly orgId: string | null }>()("Caller")
{}

class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: Caller; requires: never }>()(
  "Authentication",
  { security: { bearer: HttpApiSecurity.bearer }, error: Unauthorized }
) {}

const Organization = Schema.Struct({ id: Schema.String, name: Schema.String, created_at: Schema.String })

const Api = HttpApi.make("minimal")
  .add(
    HttpApiGroup.make("organizations")
      .add(HttpApiEndpoint.get("get", "/v1/orgs/:orgID", { params: { orgID: Schema.String }, success: Organization, error: NotFound }))
      .middleware(Authentication)
  )
  .add(HttpApiGroup.make("health").add(HttpApiEndpoint.get("live", "/healthz", { success: Schema.Struct({ status: Schema.String }) })))

const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(Effect.service(SqlClient.SqlClient), (sql) =>
    Authentication.of({
      bearer: (httpEffect, { credential }) =>
        Effect.gen(function*() {
          const hash = createHash("sha256").update(Redacted.value(credential)).digest("hex")
          const [key] = yield* Effect.orDie(
            sql<{ user_id: string | null; org_id: string | null }>`SELECT user_id, org_id FROM api_keys WHERE token_hash = ${hash}`
          )
          if (key === undefined) return yield* new Unauthorized({ error: "Invalid API key" })
          return yield* Effect.provideService(httpEffect, Caller, { userId: key.user_id, orgId: key.org_id })
        })
    }))
)

const OrganizationsLive = HttpApiBuilder.group(Api, "organizations", (handlers) =>
  Effect.map(Effect.service(SqlClient.SqlClient), (sql) =>
    handlers.handle("get", ({ params: { orgID } }) =>
      Effect.gen(function*() {
        const caller = yield* Caller
        const notFound = new NotFound({ error: `Organization ${orgID} not found` })
        const isMember = caller.userId === null
          ? caller.orgId === orgID
          : (yield* Effect.orDie(sql`SELECT role FROM org_members WHERE org_id = ${orgID} AND user_id = ${caller.userId}`))
            .length > 0
        if (!isMember) return yield* notFound
        const [organization] = yield* Effect.orDie(
          sql<{ id: string; name: string; created_at: Date }>`SELECT id, name, created_at FROM organizations WHERE id = ${orgID}`
        )
        if (organization === undefined) return yield* notFound
        return { id: organization.id, name: organization.name, created_at: new Date(organization.created_at).toISOString() }
      }))))

const HealthLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.succeed(handlers.handle("live", () => Effect.succeed({ status: "ok" }))))

const ServerLive = HttpRouter.serve(
  HttpApiBuilder.layer(Api).pipe(
    Layer.provide([OrganizationsLive, HealthLive]),
    Layer.provide(AuthenticationLive)
  ),
  { disableLogger: true, disableListenLog: true }
).pipe(
  Layer.provide(Layer.succeed(References.TracerEnabled)(false)),
  Layer.provide(PgClient.layer({ url: Redacted.make(process.env.DATABASE_URL!), maxConnections: 10 })),
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(process.env.PORT), host: process.env.HOST }))
)

NodeRuntime.runMain(Layer.launch(ServerLive))
