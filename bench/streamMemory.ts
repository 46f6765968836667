/**
 * Event streams on Postgres (docs/agents-api.md, "A slow client"; docs/performance.md): what
 * streams whose clients do not read cost the server, and how fast a stream catches up on a
 * timeline of small events.
 *
 * - The server's RSS when idle, then with STALLED_STREAMS streams open from the start of a
 *   timeline of LARGE_EVENTS events of LARGE_EVENT_CHARS (an input's size) whose clients never
 *   read: the highest sample, and the last, once the server has gone quiet. One of those clients then reads its
 *   stream to the end, which must hold every event once, in order.
 * - Events a second of one stream catching up from the start of SMALL_EVENTS events of about
 *   SMALL_EVENT_CHARS each (the median of CATCH_UP_READS streams read one after the other, each
 *   checked for every event once, in order).
 *
 * The events are written into the database directly, as the timeline stores them (many turns'
 * worth would take minutes through the API): the server has not seen them before its streams
 * read them. Postgres only (DATABASE_URL's server, else the local one; no rows when none is
 * reachable); `root` runs another checkout's server (to compare two revisions, alternately).
 * STREAM_STALLED sets the number of streams not read (10).
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { connect } from "node:net"
import pg from "pg"
import { Reply, startScriptedProvider } from "../test/support/ScriptedProvider.ts"
import { createDatabase, type FreshDatabase, ROOT } from "./Harness.ts"
import { median, request, type RuntimeRow, withProjectServer } from "./runtime.ts"
import { rssMiB, serverPid } from "./soak.ts"

const STALLED_STREAMS = Number(process.env.STREAM_STALLED ?? 10)
const LARGE_EVENTS = 600
const LARGE_EVENT_CHARS = 300_000
const SMALL_EVENTS = 10_000
const SMALL_EVENT_CHARS = 200
const CATCH_UP_READS = 5
/**
 * The stalled streams are watched, their server's RSS sampled every SAMPLE_MS, until the server
 * has used under QUIET_CPU_MS of CPU in a second (it has read and queued all it will), and for
 * at least MIN_WATCH_SECONDS and at most MAX_WATCH_SECONDS: on a busy machine the streams take
 * longer to get there than on an idle one.
 */
const SAMPLE_MS = 250
const QUIET_CPU_MS = 20
const MIN_WATCH_SECONDS = 4
const MAX_WATCH_SECONDS = 60

/** 26 characters of the ids' alphabet (a-z, 2-7), as the server's ids have. */
const idSuffix = () => Array.from(randomBytes(26), (byte) => "abcdefghijklmnopqrstuvwxyz234567"[byte % 32]).join("")

/** `count` model_output events of `text(sequence)` after the agent's last, stored as the timeline stores them. */
const insertEvents = async (client: pg.Client, agentId: string, count: number, text: (sequence: number) => string) => {
  const { rows } = await client.query("SELECT agent_config_id, last_sequence FROM agents WHERE id = $1", [agentId])
  const first = Number(rows[0].last_sequence) + 1
  // About 20 MB of text a statement.
  const batch = Math.max(1, Math.floor(20_000_000 / text(first).length))
  for (let from = first; from < first + count; from += batch) {
    const sequences = Array.from({ length: Math.min(batch, first + count - from) }, (_, index) => from + index)
    await client.query(
      `INSERT INTO agent_events (agent_id, sequence, id, agent_config_id, event_kind, data)
       SELECT $1, s.sequence, s.id, $2, 'model_output',
         jsonb_build_object('content_blocks', jsonb_build_array(jsonb_build_object('type', 'text', 'text', s.text)))
       FROM unnest($3::bigint[], $4::text[], $5::text[]) AS s(sequence, id, text)`,
      [agentId, rows[0].agent_config_id, sequences, sequences.map(() => `evt_${idSuffix()}`), sequences.map(text)]
    )
  }
  await client.query("UPDATE agents SET last_sequence = $2 WHERE id = $1", [agentId, first + count - 1])
}

/** A stream whose client sends its request and never reads: the socket is paused from the start. */
const openStalled = (baseUrl: string, path: string, token: string) => {
  const url = new URL(baseUrl)
  const socket = connect({ host: url.hostname, port: Number(url.port) })
  socket.pause()
  socket.write(
    `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\n` +
      `Accept: text/event-stream\r\nLast-Event-ID: 0\r\n\r\n`
  )
  return socket
}

/**
 * Reads the SSE frames of `body` until `count` events have come (comments and frames without
 * `id:` skipped); fails unless their ids are 1..count, in order.
 */
const readEvents = async (chunks: AsyncIterable<string>, count: number) => {
  let buffer = ""
  let expected = 1
  for await (const chunk of chunks) {
    buffer += chunk
    let end: number
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      if (!frame.startsWith("id: ")) continue
      const id = Number(frame.slice(4, frame.indexOf("\n")))
      if (id !== expected) throw new Error(`event ${id} came where ${expected} was due`)
      if (++expected > count) return
    }
  }
  throw new Error(`the stream ended after ${expected - 1} of ${count} events`)
}

/** The text of a stalled socket's response, from the socket itself (after its HTTP head; chunked). */
async function* chunkedBody(socket: ReturnType<typeof connect>): AsyncIterable<string> {
  socket.setEncoding("latin1")
  let raw = ""
  let headDone = false
  for await (const data of socket) {
    raw += data as string
    if (!headDone) {
      const head = raw.indexOf("\r\n\r\n")
      if (head < 0) continue
      raw = raw.slice(head + 4)
      headDone = true
    }
    // Chunked transfer encoding: <hex size>\r\n<data>\r\n ...
    let text = ""
    for (;;) {
      const line = raw.indexOf("\r\n")
      if (line < 0) break
      const size = parseInt(raw.slice(0, line), 16)
      if (raw.length < line + 2 + size + 2) break
      text += raw.slice(line + 2, line + 2 + size)
      raw = raw.slice(line + 2 + size + 2)
    }
    if (text !== "") yield Buffer.from(text, "latin1").toString("utf8")
  }
}

export const streamMemory = async (root = ROOT): Promise<ReadonlyArray<RuntimeRow>> => {
  let database: FreshDatabase
  try {
    database = await createDatabase()
  } catch {
    return []
  }
  const { close, provider } = await startScriptedProvider({ record: false })
  const client = new pg.Client({ connectionString: database.url })
  try {
    await Effect.runPromise(provider.answerByDefault(Reply.text("ok")))
    return await withProjectServer({ DATABASE_URL: database.url }, provider.baseUrl("openai-responses"), async ({ configId, projectUrl, server, token }) => {
      await client.connect()
      const rows: Array<RuntimeRow> = []
      const pid = serverPid(Number(new URL(server.baseUrl).port))
      const agentPath = async () => {
        const agent = await request("POST", `${projectUrl}/agents`, token, { agent_config_id: configId })
        return { id: agent.id as string, path: `${new URL(projectUrl).pathname}/agents/${agent.id}/events/stream` }
      }

      const large = await agentPath()
      const filler = randomBytes(LARGE_EVENT_CHARS).toString("base64").slice(0, LARGE_EVENT_CHARS)
      await insertEvents(client, large.id, LARGE_EVENTS, (sequence) => `${sequence}:${filler}`)
      await new Promise((resolve) => setTimeout(resolve, 2_000))
      rows.push({ name: "RSS idle", value: rssMiB(pid), unit: "MiB" })
      const stalled = Array.from({ length: STALLED_STREAMS }, () => openStalled(server.baseUrl, large.path, token))
      const samples: Array<number> = []
      const cpu: Array<number> = []
      const perSecond = 1000 / SAMPLE_MS
      for (let waited = 0; waited < MAX_WATCH_SECONDS * 1000; waited += SAMPLE_MS) {
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS))
        samples.push(rssMiB(pid))
        cpu.push(server.cpuMilliseconds())
        const quiet = cpu.length > perSecond && cpu[cpu.length - 1] - cpu[cpu.length - 1 - perSecond] < QUIET_CPU_MS
        if (quiet && waited >= MIN_WATCH_SECONDS * 1000) break
      }
      const label = `${STALLED_STREAMS} streams not read, ${LARGE_EVENTS} events of ${LARGE_EVENT_CHARS / 1000} KB`
      rows.push({ name: `RSS highest, ${label}`, value: Math.max(...samples), unit: "MiB" })
      rows.push({ name: `RSS once the server is quiet, ${label}`, value: samples[samples.length - 1], unit: "MiB" })
      rows.push({ name: `seconds until the server is quiet, ${label}`, value: (samples.length * SAMPLE_MS) / 1000, unit: "s" })
      const [reader, ...others] = stalled
      for (const socket of others) socket.destroy()
      reader.resume()
      await readEvents(chunkedBody(reader), LARGE_EVENTS)
      reader.destroy()

      const small = await agentPath()
      // A model output's JSON is about 250 characters more than its text (ids, kind, time).
      await insertEvents(client, small.id, SMALL_EVENTS, (sequence) => `${sequence}:`.padEnd(SMALL_EVENT_CHARS, "y"))
      const rates: Array<number> = []
      for (let read = 0; read < CATCH_UP_READS; read++) {
        const started = performance.now()
        const response = await fetch(`${server.baseUrl}${small.path}`, {
          headers: { authorization: `Bearer ${token}`, "last-event-id": "0" }
        })
        const body = response.body!.pipeThrough(new TextDecoderStream())
        // Leaving the loop over the body cancels it: the connection closes.
        await readEvents(body, SMALL_EVENTS)
        rates.push(SMALL_EVENTS / ((performance.now() - started) / 1000))
      }
      rows.push({
        name: `one stream catching up on ${SMALL_EVENTS} events of ${SMALL_EVENT_CHARS} B (median of ${CATCH_UP_READS})`,
        value: Math.round(median(rates)),
        unit: "events/s"
      })
      return rows
    }, root)
  } finally {
    await client.end().catch(() => undefined)
    await close()
    await database.drop()
  }
}
