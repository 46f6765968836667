/**
 * The baseline for GET /v1/orgs/{orgID}: plain node:http + pg doing the same work as the server,
 * with none of its framework: look the bearer key up by its SHA-256 hash, check that its user is
 * a member of the organization (or that an organization key is this organization's), select the
 * organization, answer JSON. Same database, same schema, same pool size as the server.
 * Run as a child process by bench/orgGet.ts: DATABASE_URL, HOST and PORT from the environment.
 */
import { createHash } from "node:crypto"
import { createServer, type ServerResponse } from "node:http"
import pg from "pg"

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const ORG_PATH = /^\/v1\/orgs\/([^/?]+)$/

const answer = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

const server = createServer(async (request, response) => {
  try {
    if (request.url === "/healthz") return answer(response, 200, { status: "ok" })
    const match = ORG_PATH.exec(request.url ?? "")
    if (match === null) return answer(response, 404, { error: "No such route", code: "not_found" })
    const orgId = match[1]
    const token = (request.headers.authorization ?? "").replace(/^Bearer /, "")
    const hash = createHash("sha256").update(token).digest("hex")
    const keys = await pool.query<{ user_id: string | null; org_id: string | null }>(
      "SELECT user_id, org_id FROM api_keys WHERE token_hash = $1",
      [hash]
    )
    const key = keys.rows[0]
    if (key === undefined) return answer(response, 401, { error: "Invalid API key", code: "unauthorized" })
    const isMember = key.user_id === null
      ? key.org_id === orgId
      : (await pool.query("SELECT role FROM org_members WHERE org_id = $1 AND user_id = $2", [orgId, key.user_id]))
        .rows.length > 0
    const notFound = { error: `Organization ${orgId} not found`, code: "not_found" }
    if (!isMember) return answer(response, 404, notFound)
    const orgs = await pool.query<{ id: string; name: string; created_at: Date }>(
      "SELECT id, name, created_at FROM organizations WHERE id = $1",
      [orgId]
    )
    const org = orgs.rows[0]
    if (org === undefined) return answer(response, 404, notFound)
    answer(response, 200, { id: org.id, name: org.name, created_at: org.created_at.toISOString() })
  } catch {
    answer(response, 500, { error: "Internal error", code: "internal_error" })
  }
})

server.listen(Number(process.env.PORT), process.env.HOST ?? "127.0.0.1")

process.on("SIGTERM", () => server.close(() => void pool.end()))
