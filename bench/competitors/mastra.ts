/**
 * Mastra (bench/competitors/mastra/server.mjs): one Agent with a Memory on LibSQL, served by
 * Mastra's own Hono server (`createNodeServer` of @mastra/deployer, what `mastra build` deploys).
 * Spoken to over Mastra's standard REST routes:
 *
 *   POST /api/memory/threads?agentId=bench                    { resourceId }    -> the thread
 *   POST /api/agents/bench/generate                           { messages, memory: { thread, resource } }
 *   GET  /api/memory/threads/:threadId/messages?agentId=bench&page=&perPage=   -> { messages, hasMore }
 *   GET  /health                                              -> 200 once it listens
 */
import type { Competitor } from "./Competitor.ts"
import { JSON_HEADERS, jsonRequest } from "./jsonRequest.ts"

const AGENT = "bench"
const RESOURCE = "bench-user"
const PAGE_SIZE = 100

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

export const mastra: Competitor = {
  name: "Mastra (Agent + Memory on LibSQL, Hono server)",
  directory: "bench/competitors/mastra",
  entry: "bench/competitors/mastra/server.mjs",
  readyPath: "/health",

  newConversation: async (baseUrl) => {
    const thread = await jsonRequest(`${baseUrl}/api/memory/threads?agentId=${AGENT}`, {
      method: "POST",
      headers: JSON_HEADERS,
      body: JSON.stringify({ resourceId: RESOURCE })
    })
    if (!isRecord(thread) || typeof thread.id !== "string") {
      throw new Error(`Mastra created a thread without an id: ${JSON.stringify(thread)}`)
    }
    return thread.id
  },

  turn: async (baseUrl, conversationId, text) => {
    const answer = await jsonRequest(`${baseUrl}/api/agents/${AGENT}/generate`, {
      method: "POST",
      headers: JSON_HEADERS,
      body: JSON.stringify({ messages: [{ role: "user", content: text }], memory: { thread: conversationId, resource: RESOURCE } })
    })
    if (!isRecord(answer) || typeof answer.text !== "string" || answer.text === "") {
      throw new Error(`Mastra's generate answered without text: ${JSON.stringify(answer).slice(0, 500)}`)
    }
  },

  storedMessages: async (baseUrl, conversationId) => {
    let count = 0
    for (let page = 0;; page++) {
      const query = `agentId=${AGENT}&resourceId=${RESOURCE}&page=${page}&perPage=${PAGE_SIZE}`
      const listed = await jsonRequest(`${baseUrl}/api/memory/threads/${encodeURIComponent(conversationId)}/messages?${query}`)
      if (!isRecord(listed) || !Array.isArray(listed.messages)) {
        throw new Error(`Mastra listed a thread's messages without messages: ${JSON.stringify(listed).slice(0, 500)}`)
      }
      count += listed.messages.length
      if (listed.hasMore !== true || listed.messages.length === 0) return count
    }
  }
}
