/**
 * The crash loop's client of the custom tool (bench/crashLoop.ts): it follows the timelines of the
 * agents whose turns call the tool, through whichever server is up, and submits each call's
 * result, as a program answering its tool would, across the kills. Most calls are answered at once
 * (the result handed to the workflow still running), some within a second, and one in ten after
 * DURABLE_ANSWER_MS, past the server's in-memory wait (docs/runtime.md), so that the workflow has
 * suspended on the durable wait first. A result whose POST got no answer is submitted again after
 * the next start; the server then accepts it or refuses it with 409 (when the first was recorded),
 * and a 409 for a call never submitted before is counted as a broken promise.
 */
import type { AgentId, ToolCallId } from "../src/domain/shared/Ids.ts"
import { type Connection, type Fleet, newEvents, submitToolResult } from "./AgentFleet.ts"

/** Longer than the server's in-memory wait for a result (IN_MEMORY_WAIT, 5 s). */
const DURABLE_ANSWER_MS = 6_000
const POLL_MS = 100

/** What the client saw of its results. */
export interface SubmittedResults {
  /** The calls whose result the server accepted (201). */
  readonly accepted: ReadonlySet<ToolCallId>
  /** 409s for calls whose earlier submission got no answer (that one was recorded). */
  readonly refusedAfterLostAnswer: number
  /** 409s for calls never submitted before: the server refused a ready call. */
  readonly refusedUnexpectedly: ReadonlyArray<ToolCallId>
}

interface Pending {
  readonly agent: AgentId
  readonly answerAt: number
  /** A submission got no answer: a 409 now means it was recorded. */
  submitted: boolean
}

const answerDelay = () => {
  const draw = Math.random()
  return draw < 0.6 ? 0 : draw < 0.9 ? Math.random() * 1_000 : DURABLE_ANSWER_MS
}

/**
 * Starts answering the calls of `agents`' custom tool through `connection()` (undefined while no
 * server is up); `stop()` ends it and returns what it saw.
 */
export const answerToolCalls = (fleet: Fleet, agents: ReadonlyArray<AgentId>, connection: () => Connection | undefined) => {
  const seen = new Map<AgentId, number>(agents.map((agent) => [agent, 0]))
  const pending = new Map<ToolCallId, Pending>()
  const accepted = new Set<ToolCallId>()
  const refusedUnexpectedly: Array<ToolCallId> = []
  let refusedAfterLostAnswer = 0

  const follow = async (current: Connection, agent: AgentId) => {
    const events = await newEvents(current, fleet, agent, seen.get(agent) ?? 0)
    if (events === undefined || events.length === 0) return
    for (const event of events) {
      if (event.event_kind === "tool_call" && event.tool_type === "custom") {
        pending.set(event.tool_call_id, { agent, answerAt: Date.now() + answerDelay(), submitted: false })
      }
    }
    seen.set(agent, events.at(-1)!.sequence)
  }

  const submit = async (current: Connection, toolCallID: ToolCallId, call: Pending) => {
    const outcome = await submitToolResult(current, fleet, call.agent, toolCallID, `found for ${toolCallID}`)
    if (outcome === undefined) {
      call.submitted = true
      return
    }
    pending.delete(toolCallID)
    if (outcome === "accepted") accepted.add(toolCallID)
    else if (call.submitted) refusedAfterLostAnswer++
    else refusedUnexpectedly.push(toolCallID)
  }

  let running = true
  const loop = (async () => {
    while (running) {
      const current = connection()
      if (current !== undefined) {
        await Promise.all(agents.map((agent) => follow(current, agent)))
        const now = Date.now()
        await Promise.all([...pending].filter(([, call]) => call.answerAt <= now).map(([id, call]) => submit(current, id, call)))
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    }
  })()

  return {
    stop: async (): Promise<SubmittedResults> => {
      running = false
      await loop
      return { accepted, refusedAfterLostAnswer, refusedUnexpectedly }
    }
  }
}
