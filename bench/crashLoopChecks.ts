/**
 * The invariants the crash loop checks once everything has settled, from the server's timeline
 * and the scripted provider's request log:
 * - every agent's events are numbered 1..n without gap or repeat;
 * - every input was recorded once (one `agent_input` per idempotency key) and its turn started
 *   at most once and ended exactly once (none lost, duplicated, or stuck running/waiting);
 * - no model call completed twice: the provider's completed answers, grouped by (turn, step),
 *   repeat only when the server was killed within `graceMs` of the first answer completing
 *   (before the server could record it). A repeat with no such kill is a call made again after
 *   its answer was recorded.
 */
import type { AgentEvent } from "../src/domain/runtime/Events.ts"
import type { Turn } from "../src/domain/runtime/Resources.ts"
import type { RecordedRequest } from "../test/support/ScriptedProvider.ts"

export interface AgentRecord {
  readonly events: ReadonlyArray<AgentEvent>
  readonly turns: ReadonlyArray<Turn>
  /** The idempotency keys of the inputs sent to this agent. */
  readonly keys: ReadonlyArray<string>
}

/** A model call seen by the provider, with when it arrived. */
export interface ObservedCall {
  readonly request: RecordedRequest
  readonly arrivedAt: number
}

export interface CrashLoopCounts {
  inputs: number
  finished: number
  failed: number
  cancelled: number
  lost: number
  duplicated: number
  gaps: number
  stuck: number
  modelCalls: number
  repeatedModelCalls: number
  repeatedAfterRecorded: number
  /** Of the repeats explained by a kill, the longest time from the first answer to the kill. */
  longestAnswerToKillMs: number
}

const textOf = (item: { content?: unknown }) =>
  Array.isArray(item.content) ? item.content.map((part: { text?: string }) => part.text ?? "").join("") : ""

/** (the turn's input text, the step): the last user message of the request, and the model answers after it. */
const callKey = (request: RecordedRequest): string | undefined => {
  const input = request.body?.input
  if (!Array.isArray(input)) return undefined
  const lastUser = input.findLastIndex((item: { role?: string }) => item.role === "user")
  if (lastUser < 0) return undefined
  const answersAfter = input.slice(lastUser + 1).filter((item: { role?: string; type?: string }) =>
    item.role === "assistant" || item.type === "function_call"
  ).length
  return `${textOf(input[lastUser])} / step ${answersAfter + 1}`
}

export const countTimelines = (records: ReadonlyArray<AgentRecord>, counts: CrashLoopCounts) => {
  for (const { events, keys, turns } of records) {
    counts.inputs += keys.length
    events.forEach((event, index) => {
      if (event.sequence !== index + 1) counts.gaps++
    })
    const inputs = events.filter((event) => event.event_kind === "agent_input")
    for (const key of keys) {
      const recorded = inputs.filter((event) => "input_idempotency_key" in event && event.input_idempotency_key === key)
      if (recorded.length === 0) counts.lost++
      if (recorded.length > 1) counts.duplicated += recorded.length - 1
    }
    const unfinished = new Set(turns.filter((turn) => turn.status === "running" || turn.status === "waiting").map((turn) => turn.id))
    counts.stuck += unfinished.size
    for (const input of inputs) {
      const turnEvents = events.filter((event) => event.turn_id === input.turn_id && event.event_kind === "turn")
      const statuses = turnEvents.map((event) => ("turn_status" in event ? event.turn_status : undefined))
      const endings = statuses.filter((status) => status !== "started")
      if (statuses.filter((status) => status === "started").length > 1 || endings.length > 1) counts.duplicated++
      // A turn that never ended is stuck when the server still shows it working, else lost.
      if (endings.length === 0 && !unfinished.has(input.turn_id!)) counts.lost++
      if (endings[0] === "completed") counts.finished++
      if (endings[0] === "failed") counts.failed++
      if (endings[0] === "cancelled") counts.cancelled++
    }
  }
}

export const countModelCalls = (
  calls: ReadonlyArray<ObservedCall>,
  kills: ReadonlyArray<number>,
  answerDelayMs: number,
  graceMs: number,
  counts: CrashLoopCounts
) => {
  const completed = new Map<string, Array<ObservedCall>>()
  for (const call of calls) {
    const key = callKey(call.request)
    if (key === undefined || call.request.aborted) continue
    counts.modelCalls++
    completed.set(key, [...(completed.get(key) ?? []), call])
  }
  for (const group of completed.values()) {
    if (group.length < 2) continue
    counts.repeatedModelCalls += group.length - 1
    group.sort((a, b) => a.arrivedAt - b.arrivedAt)
    for (let index = 1; index < group.length; index++) {
      const answered = group[index - 1].arrivedAt + answerDelayMs
      const kill = kills.find((at) => at >= group[index - 1].arrivedAt && at <= group[index].arrivedAt)
      if (kill === undefined || kill > answered + graceMs) counts.repeatedAfterRecorded++
      else counts.longestAnswerToKillMs = Math.max(counts.longestAnswerToKillMs, kill - answered)
    }
  }
}
