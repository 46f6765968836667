/**
 * What the history cache holds a turn, against what its bound counts (docs/performance-record.md, "The
 * history cache's items at their size"). TurnHistory forgets agents past MAX_CACHED_BYTES of
 * `ModelView.bytes`, an estimate; the bound means what it says only while the estimate is close to
 * the memory the views really keep. In this process, AGENTS agents take TURNS turns in rotation,
 * each an input and an answer of a few characters (as the soak's) or of LONG_TEXT; their views are
 * folded as TurnHistory folds them, and each turn's model call body is built by the
 * openai-responses adapter (whose fold keeps the settled items' JSON as bytes). The heap and the
 * buffers are read after full collections before and after. Rows per text length: the heap and
 * the buffers a turn holds, and what the view counts for it.
 */
import { runInNewContext } from "node:vm"
import { setFlagsFromString } from "node:v8"
import { Redacted } from "effect"
import type { AgentEvent } from "../src/domain/runtime/Events.ts"
import { conversationOf, EMPTY_VIEW, foldView, type ModelView } from "../src/services/runtime/Conversation.ts"
import type { ModelRequest } from "../src/services/runtime/model/ModelMessages.ts"
import { OpenAiResponses } from "../src/services/runtime/model/OpenAiResponses.ts"
import type { RuntimeRow } from "./runtime.ts"

const AGENTS = 100
const TURNS = 300
const LONG_TEXT = 1_000

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void

/** The heap used and the memory of buffers, after full collections. */
const memoryAfterGc = () => {
  gc()
  gc()
  const { external, heapUsed } = process.memoryUsage()
  return { heapUsed, external }
}

/** A text of its own (as a decoded event's is): `length` characters, then the turn's number. */
const textOf = (letter: string, length: number, turn: number) => Buffer.from(`${letter.repeat(length)}${turn}`).toString()

/** The events of a turn as the fold reads them (the fields it does not read left out). */
const eventsOf = (first: number, turn: string, kinds: ReadonlyArray<Record<string, unknown>>) =>
  kinds.map((event, index) => ({ ...event, turn_id: turn, sequence: first + index }) as unknown as AgentEvent)

const NO_CALL_IDS: ReadonlyMap<string, string> = new Map()

/** The heap, buffers and counted bytes a turn holds, with inputs and answers of `length` characters. */
const measure = (length: number) => {
  const views: Array<ModelView> = Array.from({ length: AGENTS }, () => EMPTY_VIEW)
  const before = memoryAfterGc()
  let bodyBytes = 0
  for (let turn = 0; turn < TURNS; turn++) {
    for (let agent = 0; agent < AGENTS; agent++) {
      const turnId = `trn_${agent}_${turn}`
      const started = foldView(
        views[agent],
        eventsOf(4 * turn + 1, turnId, [
          { event_kind: "agent_input", content_blocks: [{ type: "text", text: textOf("i", length, turn) }] },
          { event_kind: "turn", turn_status: "started" }
        ]),
        NO_CALL_IDS
      )
      const request = {
        model: "bench",
        instruction: "Answer briefly.",
        tools: [],
        conversation: conversationOf(started).items,
        apiKey: Redacted.make("bench"),
        conversationKey: `agt_${agent}`,
        cacheRetention: "none"
      } as unknown as ModelRequest
      for (const chunk of OpenAiResponses.body(request, true)) bodyBytes += chunk.length
      views[agent] = foldView(
        started,
        eventsOf(4 * turn + 3, turnId, [
          { event_kind: "model_output", content_blocks: [{ type: "text", text: textOf("o", length, turn) }] },
          { event_kind: "turn", turn_status: "completed" }
        ]),
        NO_CALL_IDS
      )
    }
  }
  const after = memoryAfterGc()
  const turns = AGENTS * TURNS
  const counted = views.reduce((total, view) => total + view.bytes, 0)
  const label = `texts of ${length === 0 ? "a few characters" : `${length} characters`}`
  return [
    { name: `heap held a cached turn, ${label}`, value: (after.heapUsed - before.heapUsed) / turns, unit: "bytes" },
    { name: `buffers held a cached turn, ${label}`, value: (after.external - before.external) / turns, unit: "bytes" },
    { name: `counted by the cache's bound a turn, ${label}`, value: counted / turns, unit: "bytes" },
    { name: `model call body, mean (sent, not held), ${label}`, value: bodyBytes / turns, unit: "bytes" }
  ]
}

export const historyMemory = (): ReadonlyArray<RuntimeRow> => [...measure(0), ...measure(LONG_TEXT)]
