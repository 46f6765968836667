/**
 * The baseline: plain node:http + pg doing the same work as the server for two of its routes,
 * with none of its framework. Same database, same schema, same pool size as the server.
 * - GET /v1/orgs/{orgID} (bench/orgGet.ts): look the bearer key up by its SHA-256 hash, check
 *   that its user is a member of the organization (or that an organization key is this
 *   organization's), select the organization, answer JSON.
 * - POST /v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/inputs (bench/appends.ts): read
 *   the key with the caller's membership of the organization and the project's existence in one
 *   statement (the server's reads the caller's project role too), then one statement that queues
 *   the input: the agent's row, the input's and its `agent_input` event, as the server's writes
 *   them. Only a queued input: the benchmark's agents are all in a turn, and one that is not (or
 *   has a full backlog) is refused.
 *   Both statements are prepared once a connection, as the server's are: parsing and planning
 *   the write at every input would double Postgres's work an append.
 * Run as a child process by those benchmarks: DATABASE_URL, HOST and PORT from the environment.
 */
import { createHash, randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import pg from "pg"

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const ORG_PATH = /^\/v1\/orgs\/([^/?]+)$/
const INPUTS_PATH = /^\/v1\/orgs\/([^/?]+)\/projects\/([^/?]+)\/agents\/([^/?]+)\/inputs$/
/** The server's bound on an agent's backlog (AgentInputs.MAX_BACKLOG). */
const MAX_BACKLOG = 100

const answer = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

const bearerHash = (request: IncomingMessage) => sha256((request.headers.authorization ?? "").replace(/^Bearer /, ""))

const readBody = async (request: IncomingMessage) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

/**
 * An id with the server's prefix and length: 26 hex characters, where the server's are base32 and
 * time-ordered. Nothing reads these back (the benchmark's database is dropped after the run).
 */
const newId = (prefix: string) => `${prefix}_${randomUUID().replaceAll("-", "").slice(0, 26)}`

const getOrganization = async (request: IncomingMessage, response: ServerResponse, orgId: string) => {
  const keys = await pool.query<{ user_id: string | null; org_id: string | null }>(
    "SELECT user_id, org_id FROM api_keys WHERE token_hash = $1",
    [bearerHash(request)]
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
}

interface Standing {
  readonly org_id: string | null
  readonly member_role: string | null
  readonly project_found: boolean
}

interface QueuedEvent {
  readonly sequence: string
  readonly turn_sequence: number
  readonly agent_config_id: string
  readonly created_at: Date
}

const queueInput = async (
  request: IncomingMessage,
  response: ServerResponse,
  [orgId, projectId, agentId]: ReadonlyArray<string>
) => {
  const body = await readBody(request)
  const standings = await pool.query<Standing>({
    name: "standing",
    text: `SELECT k.org_id, m.role AS member_role, p.id IS NOT NULL AS project_found
     FROM api_keys k
       LEFT JOIN org_members m ON m.org_id = $1 AND m.user_id = k.user_id
       LEFT JOIN projects p ON p.id = $2 AND p.org_id = $1
     WHERE k.token_hash = $3`,
    values: [orgId, projectId, bearerHash(request)]
  })
  const standing = standings.rows[0]
  if (standing === undefined) return answer(response, 401, { error: "Invalid API key", code: "unauthorized" })
  if ((standing.member_role === null && standing.org_id !== orgId) || !standing.project_found) {
    return answer(response, 404, { error: `Project ${projectId} not found`, code: "not_found" })
  }
  let contentBlocks: unknown
  try {
    contentBlocks = (JSON.parse(body) as { content_blocks?: unknown }).content_blocks
  } catch {
    contentBlocks = undefined
  }
  if (!Array.isArray(contentBlocks) || contentBlocks.length === 0) {
    return answer(response, 400, { error: "content_blocks: expected a non-empty array", code: "invalid_request" })
  }
  const inputId = newId("inp")
  const turnId = newId("turn")
  const eventId = newId("evt")
  const blocks = JSON.stringify(contentBlocks)
  const data = { agent_input_id: inputId, input_kind: "content", content_blocks: contentBlocks, actor_id: null, input_idempotency_key: null }
  const queued = await pool.query<QueuedEvent>({
    name: "queue_input",
    text: `WITH allocated AS (
       UPDATE agents SET last_sequence = last_sequence + 1, updated_at = now()
       WHERE id = $1 AND project_id = $2 AND current_turn_id IS NOT NULL AND queued_inputs < $3
       RETURNING last_sequence, agent_config_id
     ), new_input AS (
       INSERT INTO agent_inputs (id, agent_id, turn_id, status, event_sequence, request_hash, disposition, content_blocks)
       SELECT $4, $1, $5, 'queued', last_sequence, $6, 'queued', $7 FROM allocated
     )
     INSERT INTO agent_events (agent_id, sequence, id, agent_config_id, turn_id, turn_sequence, is_opening_event, event_kind, data)
     SELECT $1, last_sequence, $8, agent_config_id, $5,
       COALESCE((SELECT max(e.turn_sequence) FROM agent_events e WHERE e.turn_id = $5), -1) + 1,
       true, 'agent_input', $9
     FROM allocated
     RETURNING sequence, turn_sequence, agent_config_id, created_at`,
    values: [agentId, projectId, MAX_BACKLOG, inputId, turnId, `sha256:${sha256(blocks)}`, blocks, eventId, JSON.stringify(data)]
  })
  const event = queued.rows[0]
  if (event === undefined) {
    return answer(response, 409, { error: `Agent ${agentId} is not in a turn, or its backlog is full`, code: "state_transition_conflict" })
  }
  answer(response, 201, {
    disposition: "queued",
    event: {
      id: eventId,
      agent_id: agentId,
      agent_config_id: event.agent_config_id,
      sequence: Number(event.sequence),
      turn_id: turnId,
      turn_sequence: event.turn_sequence,
      is_opening_event: true,
      event_kind: "agent_input",
      created_at: event.created_at.toISOString(),
      ...data
    }
  })
}

const server = createServer(async (request, response) => {
  try {
    if (request.url === "/healthz") return answer(response, 200, { status: "ok" })
    const url = request.url ?? ""
    const org = ORG_PATH.exec(url)
    if (request.method === "GET" && org !== null) return await getOrganization(request, response, org[1])
    const inputs = INPUTS_PATH.exec(url)
    if (request.method === "POST" && inputs !== null) return await queueInput(request, response, inputs.slice(1))
    answer(response, 404, { error: "No such route", code: "not_found" })
  } catch {
    answer(response, 500, { error: "Internal error", code: "internal_error" })
  }
})

server.listen(Number(process.env.PORT), process.env.HOST ?? "127.0.0.1")

process.on("SIGTERM", () => server.close(() => void pool.end()))
