/**
 * The LangGraph.js Agent Server (`langgraph dev` of @langchain/langgraph-cli, in-memory), serving
 * the ReAct agent `bench` of bench/competitors/langgraph/agent.mjs, over its REST API:
 *
 *   POST /threads                          -> a conversation (thread_id)
 *   POST /threads/{thread_id}/runs/wait    -> a turn: runs the graph on the message, answers with the state
 *   GET  /threads/{thread_id}/state        -> the thread's state: values.messages
 *   GET  /ok                               -> ready
 *
 * `runs/wait` answers 200 at once and keeps the connection alive with newlines until the run ends;
 * then it writes the state's values as JSON, or `{ "__error__": ... }` when the run failed.
 */
import type { Competitor } from "./Competitor.ts"
import { JSON_HEADERS, jsonRequest } from "./jsonRequest.ts"

interface StoredMessage {
  readonly type?: string
  readonly content?: unknown
}

const messagesOf = (values: unknown): ReadonlyArray<StoredMessage> | undefined => {
  if (typeof values !== "object" || values === null) return undefined
  const messages = (values as { messages?: unknown }).messages
  return Array.isArray(messages) ? messages as ReadonlyArray<StoredMessage> : undefined
}

export const langgraph: Competitor = {
  name: "LangGraph.js Agent Server (dev, in-memory)",
  directory: "bench/competitors/langgraph",
  entry: "bench/competitors/langgraph/server.mjs",
  readyPath: "/ok",
  newConversation: async (baseUrl) => {
    const thread = await jsonRequest(`${baseUrl}/threads`, { method: "POST", headers: JSON_HEADERS, body: "{}" })
    const id = (thread as { thread_id?: unknown }).thread_id
    if (typeof id !== "string") throw new Error(`POST /threads answered no thread_id: ${JSON.stringify(thread)}`)
    return id
  },
  turn: async (baseUrl, conversationId, text) => {
    const values = await jsonRequest(`${baseUrl}/threads/${conversationId}/runs/wait`, {
      method: "POST",
      headers: JSON_HEADERS,
      body: JSON.stringify({ assistant_id: "bench", input: { messages: [{ role: "user", content: text }] } })
    })
    if (typeof values === "object" && values !== null && "__error__" in values) {
      throw new Error(`the run failed: ${JSON.stringify((values as { __error__: unknown }).__error__)}`)
    }
    const last = messagesOf(values)?.at(-1)
    if (last?.type !== "ai" || typeof last.content !== "string" || last.content === "") {
      throw new Error(`the run answered no assistant message: ${JSON.stringify(values).slice(0, 500)}`)
    }
  },
  storedMessages: async (baseUrl, conversationId) => {
    const state = await jsonRequest(`${baseUrl}/threads/${conversationId}/state`, { method: "GET" })
    const messages = messagesOf((state as { values?: unknown }).values)
    if (messages === undefined) throw new Error(`the thread's state has no messages: ${JSON.stringify(state).slice(0, 500)}`)
    return messages.length
  }
}
