/**
 * The minimal server on Effect 3 (the versions this server ran on before Effect 4), for
 * bench/frameworks.ts: the baseline's GET /v1/orgs/{orgID} (the key by its hash, the membership,
 * the organization) and GET /healthz through HttpApi, a bearer security middleware and
 * @effect/sql-pg, with tracing off and no request log. ../effect4/server.ts is the same server on
 * Effect 4, line for line where the two APIs allow. Run as a child process: DATABASE_URL, HOST and
 * PORT from the environment.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  HttpMiddleware
} from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { createHash } from "node:crypto"
import { createServer } from "node:http"

class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  { error: Schema.String },
  HttpApiSchema.annotations({ status: 401 })
) {}
class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  { error: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {}

class Caller extends Context.Tag("Caller")<Caller, { readonly userId: string | null; readonly orgId: string | null }>() {}

class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Unauthorized,
  provides: Caller,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

const Organization = Schema.Struct({ id: Schema.String, name: Schema.String, created_at: Schema.String })

const Api = HttpApi.make("minimal")
  .add(
    HttpApiGroup.make("organizations")
      .add(
        HttpApiEndpoint.get("get", "/v1/orgs/:orgID")
          .setPath(Schema.Struct({ orgID: Schema.String }))
          .addSuccess(Organization)
          .addError(NotFound)
      )
      .middleware(Authentication)
  )
  .add(HttpApiGroup.make("health").add(HttpApiEndpoint.get("live", "/healthz").addSuccess(Schema.Struct({ status: Schema.String }))))

const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(SqlClient.SqlClient, (sql) =>
    Authentication.of({
      bearer: (token) =>
        Effect.gen(function*() {
          const hash = createHash("sha256").update(Redacted.value(token)).digest("hex")
          const [key] = yield* Effect.orDie(
            sql<{ user_id: string | null; org_id: string | null }>`SELECT user_id, org_id FROM api_keys WHERE token_hash = ${hash}`
          )
          if (key === undefined) return yield* new Unauthorized({ error: "Invalid API key" })
          return { userId: key.user_id, orgId: key.org_id }
        })
    }))
)

const OrganizationsLive = HttpApiBuilder.group(Api, "organizations", (handlers) =>
  Effect.map(SqlClient.SqlClient, (sql) =>
    handlers.handle("get", ({ path: { orgID } }) =>
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
        return { id: organization.id, name: organization.name, created_at: organization.created_at.toISOString() }
      }))))

const HealthLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.succeed(handlers.handle("live", () => Effect.succeed({ status: "ok" }))))

const ServerLive = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(Api).pipe(
    Layer.provide([OrganizationsLive, HealthLive]),
    Layer.provide(AuthenticationLive)
  )),
  HttpMiddleware.withTracerDisabledWhen(() => true),
  Layer.provide(Layer.setTracerEnabled(false)),
  Layer.provide(PgClient.layer({ url: Redacted.make(process.env.DATABASE_URL!), maxConnections: 10 })),
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(process.env.PORT), host: process.env.HOST }))
)

NodeRuntime.runMain(Layer.launch(ServerLive))
