/**
 * Mastra as a user would deploy it, for bench/competitors.ts: one Agent ("bench", no tools) with a
 * Memory on a LibSQL file database, served by Mastra's own Hono server — createNodeServer from
 * @mastra/deployer/server, the server that `mastra build` bundles into .mastra/output/index.mjs —
 * with Mastra's standard REST routes under /api (POST /api/agents/bench/generate,
 * POST /api/memory/threads, GET /api/memory/threads/:threadId/messages) and GET /health, which
 * answers 200 once the server listens.
 *
 * Env: PORT, MODEL_BASE_URL (an OpenAI-compatible base, e.g. http://127.0.0.1:PORT/openai/v1, called
 * at {base}/chat/completions), MODEL_API_KEY, DATA_DIR (mastra.db goes there).
 *
 * Nothing that makes extra model calls or needs an embedder: no semantic recall, no working memory,
 * no observational memory, no thread titles. Mastra's anonymous telemetry (PostHog) is off, there
 * is no observability exporter, no Studio, no request logs, and Mastra's logger is at "warn".
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { Agent } from "@mastra/core/agent"
import { ConsoleLogger } from "@mastra/core/logger"
import { Mastra } from "@mastra/core/mastra"
import { createNodeServer } from "@mastra/deployer/server"
import { LibSQLStore } from "@mastra/libsql"
import { Memory } from "@mastra/memory"
import { mkdirSync } from "node:fs"
import { join, resolve } from "node:path"

// Read when telemetry would be sent (at server start), so setting it here is in time.
process.env.MASTRA_TELEMETRY_DISABLED = "1"

const required = (name) => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is not set`)
  return value
}

const port = Number(required("PORT"))
const dataDir = resolve(required("DATA_DIR"))
mkdirSync(dataDir, { recursive: true })

const provider = createOpenAICompatible({
  name: "bench",
  baseURL: required("MODEL_BASE_URL"),
  apiKey: required("MODEL_API_KEY")
})

const storage = new LibSQLStore({ id: "bench-storage", url: `file:${join(dataDir, "mastra.db")}` })

const bench = new Agent({
  id: "bench",
  name: "bench",
  instructions: "Answer briefly.",
  model: provider.chatModel("bench-1"),
  memory: new Memory({
    storage,
    options: {
      lastMessages: 40,
      semanticRecall: false,
      workingMemory: { enabled: false },
      observationalMemory: false,
      generateTitle: false
    }
  })
})

const mastra = new Mastra({
  agents: { bench },
  storage,
  logger: new ConsoleLogger({ name: "Mastra", level: "warn" }),
  server: { host: "127.0.0.1", port }
})

await createNodeServer(mastra, { tools: {}, studio: false })
