/**
 * The invariants the crash loop checks once everything has settled, from the server's timeline
 * and the scripted provider's request log:
 * - every agent's events are numbered 1..n without gap or repeat;
 * - every input was recorded once (one `agent_input` per idempotency key) and its turn started
 *   at most once and ended exactly once (none lost, duplicated, or stuck running/waiting);
 * - no model call completed twice: the provider's completed answers, grouped by (turn, step), may
 *   repeat only across a kill that came before the step was recorded; no call for a step arrives
 *   after its answer was recorded (the time of the step's `model_output` or `tool_call` event); no
 *   step is recorded twice;
 * - a turn that calls the custom tool records its call once and the call's result once; every
 *   result the server accepted is on the timeline, a completed turn's call has its result, and the
 *   server refused (409) no call's first submission (bench/crashLoopAnswerer.ts).
 */
import type { AgentEvent } from "../src/domain/runtime/Events.ts"
import type { Turn } from "../src/domain/runtime/Turns.ts"
import type { RecordedRequest } from "../test/support/ScriptedProvider.ts"
import type { SubmittedResults } from "./crashLoopAnswerer.ts"

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
  /** Completed answers for a step that already had one (the server died before recording it). */
  repeatedModelCalls: number
  /** Calls made after their step's answer was recorded. */
  repeatedAfterRecorded: number
  /** Completed answers repeated with no kill in between. */
  repeatedWithoutKill: number
  /** Of the repeats, the longest time from the earlier answer to the kill that lost it. */
  longestAnswerToKillMs: number
  /** Turns with more than one `model_output` event (every scripted answer is one text, so one step). */
  outputsRecordedTwice: number
  /** Calls of the custom tool recorded (a `tool_call` event each). */
  toolCalls: number
  /** Turns with more than one `tool_call` event (a scripted turn calls the tool once). */
  callsRecordedTwice: number
  /** Calls with more than one `tool_result` event. */
  resultsRecordedTwice: number
  /** Results accepted but not on the timeline, and calls of completed turns without a result. */
  resultsLost: number
  /** Results submitted again after a kill and refused because the first was recorded (expected). */
  resultsRefusedAfterLostAnswer: number
  /** First submissions refused with 409 (broken). */
  resultsRefusedUnexpectedly: number
  /** What explains a broken invariant: the repeats, the failed turns' errors. */
  details: Array<string>
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
      if (endings[0] === "failed") {
        counts.failed++
        const failed = turnEvents.find((event) => "turn_status" in event && event.turn_status === "failed")
        counts.details.push(`turn ${input.turn_id} failed: ${failed !== undefined && "error" in failed ? failed.error : "?"}`)
      }
      const outputs = events.filter((event) => event.turn_id === input.turn_id && event.event_kind === "model_output")
      if (outputs.length > 1) counts.outputsRecordedTwice++
      if (endings[0] === "cancelled") counts.cancelled++
      const calls = events.flatMap((event) =>
        event.turn_id === input.turn_id && event.event_kind === "tool_call" ? [event.tool_call_id] : []
      )
      if (calls.length > 1) counts.callsRecordedTwice++
      for (const call of calls) {
        const results = events.filter((event) => event.event_kind === "tool_result" && event.tool_call_id === call).length
        if (results > 1) counts.resultsRecordedTwice++
        if (results === 0 && endings[0] === "completed") {
          counts.resultsLost++
          counts.details.push(`turn ${input.turn_id} completed without its call's result`)
        }
      }
    }
  }
}

/** The client's side of the custom tool's results: each accepted result is on its agent's timeline. */
export const countToolResults = (records: ReadonlyArray<AgentRecord>, submitted: SubmittedResults, counts: CrashLoopCounts) => {
  const recorded = new Set(records.flatMap(({ events }) =>
    events.flatMap((event) => (event.event_kind === "tool_result" ? [event.tool_call_id] : []))
  ))
  counts.toolCalls = records.reduce((sum, { events }) => sum + events.filter((event) => event.event_kind === "tool_call").length, 0)
  for (const id of submitted.accepted) {
    if (recorded.has(id)) continue
    counts.resultsLost++
    counts.details.push(`the result of ${id} was accepted and is not on the timeline`)
  }
  counts.resultsRefusedAfterLostAnswer = submitted.refusedAfterLostAnswer
  counts.resultsRefusedUnexpectedly = submitted.refusedUnexpectedly.length
  for (const id of submitted.refusedUnexpectedly) counts.details.push(`the first result submitted for ${id} was refused`)
}

/**
 * When each step's answer was recorded, by the turn's input text: the n-th `model_output` or
 * `tool_call` of a turn (a scripted answer is one text or one call, so one event a step).
 */
const recordedSteps = (records: ReadonlyArray<AgentRecord>): Map<string, number> => {
  const recorded = new Map<string, number>()
  for (const { events } of records) {
    for (const input of events.filter((event) => event.event_kind === "agent_input")) {
      const text = "content_blocks" in input ? input.content_blocks.map((block) => ("text" in block ? block.text : "")).join("") : ""
      events
        .filter((event) => event.turn_id === input.turn_id && (event.event_kind === "model_output" || event.event_kind === "tool_call"))
        .forEach((output, index) => recorded.set(`${text} / step ${index + 1}`, new Date(output.created_at).getTime()))
    }
  }
  return recorded
}

/** How late the 20 ms poll may stamp a call's arrival. */
const ARRIVAL_SLACK_MS = 100

/**
 * A model call for a step may be made again only when the server was killed after the previous
 * completed answer and before the step was recorded. Broken when a call arrives after its step's
 * answer was recorded (the `model_output` event's `created_at`), or repeats with no kill between.
 */
export const countModelCalls = (
  calls: ReadonlyArray<ObservedCall>,
  kills: ReadonlyArray<number>,
  records: ReadonlyArray<AgentRecord>,
  answerDelayMs: number,
  counts: CrashLoopCounts
) => {
  const recorded = recordedSteps(records)
  const completed = new Map<string, Array<ObservedCall>>()
  for (const call of calls) {
    const key = callKey(call.request)
    if (key === undefined) continue
    const recordedAt = recorded.get(key)
    if (recordedAt !== undefined && call.arrivedAt > recordedAt + ARRIVAL_SLACK_MS) {
      counts.repeatedAfterRecorded++
      counts.details.push(`${key}: asked ${call.arrivedAt - recordedAt} ms after its answer was recorded`)
    }
    if (call.request.aborted) continue
    counts.modelCalls++
    completed.set(key, [...(completed.get(key) ?? []), call])
  }
  for (const [key, group] of completed) {
    group.sort((a, b) => a.arrivedAt - b.arrivedAt)
    for (let index = 1; index < group.length; index++) {
      counts.repeatedModelCalls++
      const kill = kills.find((at) => at >= group[index - 1].arrivedAt && at <= group[index].arrivedAt)
      if (kill === undefined) {
        counts.repeatedWithoutKill++
        counts.details.push(`${key}: answered twice with no kill in between`)
      } else {
        counts.longestAnswerToKillMs = Math.max(counts.longestAnswerToKillMs, kill - (group[index - 1].arrivedAt + answerDelayMs))
      }
    }
  }
}
