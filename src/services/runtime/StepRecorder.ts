/**
 * Recording a model call's response (docs/runtime.md, "The loop"): its output on the timeline
 * (text and reasoning summaries, tool calls), the dispatch of each tool call, the turn's usage
 * and the step's `turn_steps` row, all in ONE transaction, so a model call whose output is
 * recorded is never made again after a crash. A response without tool calls ends the turn: in
 * one statement when nothing is in the way (docs/runtime.md, "A turn's end in one statement"), as
 * is a response whose tool calls each just wait for a client's or a machine's result ("A step's
 * tool calls in one statement").
 *
 * When the step is recorded already (the same step ran twice at once: a workflow moving to another
 * process while its model call was still running on the first), the transaction is rolled back
 * and the recorded outcome returned, so the output is recorded once.
 */
import { Array as Arr, Context, Effect, Layer, Option, Schema } from "effect"
import { isBuiltinTool } from "../../domain/configuration/agent-config/BuiltinTools.ts"
import type { CompiledTool } from "../../domain/configuration/agent-config/Compiled.ts"
import { wakeIdOf } from "../../domain/machines/MachineTarget.ts"
import { ToolCallId, type TurnId } from "../../domain/shared/Ids.ts"
import type { Agent } from "../../domain/runtime/Agents.ts"
import type { NewEvent } from "../../domain/runtime/Events.ts"
import { MachineHub } from "../machines/MachineHub.ts"
import { someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { REPLAY_METADATA_KEY } from "./Conversation.ts"
import type { AssistantItem, ModelResponse } from "./model/ModelMessages.ts"
import { Timeline } from "./Timeline.ts"
import { type NewToolCall, ToolCallsRepository } from "./ToolCallsRepository.ts"
import { ASK_QUESTION } from "./ToolDefinitions.ts"
import { dispatchedWithItsRow, machineRequest, runsOnMachine, stateOnDispatch, ToolDispatch } from "./ToolDispatch.ts"
import { TurnHistory } from "./TurnHistory.ts"
import { TurnLauncher } from "./TurnLauncher.ts"
import { StepAlreadyRecorded, TurnLifecycle } from "./TurnLifecycle.ts"
import type { TurnSetup } from "./TurnSetups.ts"
import { TurnsRepository } from "./TurnsRepository.ts"
import type { PlannedCall, StepOutcome, TurnPayload } from "./TurnWorkflow.ts"
import { finishedStep, signalToken, stoppedStep } from "./TurnWorkflow.ts"


/** What a call that asks for approval waits for once approved: its result (custom and machine calls), its answer, or nothing. */
const waitAfterApproval = (name: string, type: "built_in" | "custom", onMachine: boolean): PlannedCall["then"] =>
  type === "custom" || onMachine ? "result" : name === ASK_QUESTION ? "question" : "none"

/** A tool call the model made. */
type ToolCallItem = Extract<AssistantItem, { readonly type: "tool_call" }>

/**
 * A new tool call: its row, the call as the model made it, its tool, whether it runs on the
 * agent's machine, and what it waits for once approved.
 */
interface NewCall {
  readonly id: ToolCallId
  readonly item: ToolCallItem
  readonly tool: CompiledTool | undefined
  readonly type: "built_in" | "custom"
  readonly onMachine: boolean
  readonly row: NewToolCall
  readonly afterApproval: PlannedCall["then"]
}

/** The turn had ended (cancelled) before its last model call was recorded: its transaction rolls back. */
class TurnAlreadyEnded extends Schema.TaggedError<TurnAlreadyEnded>()("TurnAlreadyEnded", {}) {
  override get message() {
    return "The turn ended before its model call was recorded"
  }
}

/** The model's output as timeline events: consecutive text and reasoning in one `model_output`, each tool call its own event. */
const outputEvents = (
  turnId: TurnId,
  output: ReadonlyArray<AssistantItem>,
  calls: ReadonlyArray<{ readonly id: ToolCallId; readonly type: "built_in" | "custom" }>
): Array<NewEvent> => {
  const events: Array<NewEvent> = []
  let blocks: Array<Extract<NewEvent, { event_kind: "model_output" }>["content_blocks"][number]> = []
  const flush = () => {
    if (blocks.length > 0) {
      events.push({ event_kind: "model_output", turn_id: turnId, is_opening_event: false, content_blocks: blocks })
    }
    blocks = []
  }
  let callIndex = 0
  for (const item of output) {
    switch (item.type) {
      case "assistant_text":
        if (item.text !== "") blocks.push({ type: "text", text: item.text })
        break
      case "assistant_reasoning":
        blocks.push(
          item.replay === undefined
            ? { type: "reasoning_summary", text: item.summary }
            : { type: "reasoning_summary", text: item.summary, metadata: { [REPLAY_METADATA_KEY]: item.replay } }
        )
        break
      case "tool_call": {
        flush()
        const call = calls[callIndex++]
        events.push({
          event_kind: "tool_call",
          turn_id: turnId,
          is_opening_event: false,
          tool_call_id: call.id,
          tool_name: item.name,
          tool_type: call.type,
          tool_input: item.input
        })
        break
      }
    }
  }
  flush()
  return events
}

const make = Effect.gen(function*() {
  const timeline = yield* Timeline
  const lifecycle = yield* TurnLifecycle
  const turns = yield* TurnsRepository
  const toolCalls = yield* ToolCallsRepository
  const dispatcher = yield* ToolDispatch
  const launcher = yield* TurnLauncher
  const ids = yield* IdGenerator
  const hub = yield* MachineHub
  const histories = yield* TurnHistory

  /** The rows of the model's new tool calls, with what each call is and waits for once approved. */
  const newCalls = (payload: TurnPayload, setup: TurnSetup, toolItems: Arr.NonEmptyReadonlyArray<ToolCallItem>) =>
    Effect.forEach(toolItems, (item) =>
      Effect.gen(function*() {
        const id = yield* ids.make(ToolCallId)
        const tool = setup.tools[item.name]
        const type: "built_in" | "custom" = tool?.type ?? (isBuiltinTool(item.name) ? "built_in" : "custom")
        const onMachine = type === "built_in" && runsOnMachine(item.name, setup.machine)
        const row: NewToolCall = {
          id,
          agent_id: payload.agent_id,
          turn_id: payload.turn_id,
          provider_call_id: item.call_id,
          name: item.name,
          input: item.input,
          type,
          state: stateOnDispatch(tool, false),
          deferred_token: type === "custom" || onMachine ? yield* signalToken(payload, "result", id) : null
        }
        return { id, item, tool, type, onMachine, row, afterApproval: waitAfterApproval(item.name, type, onMachine) }
      }))

  /**
   * Records a model response that ends the turn, or whose tool calls are each dispatched with
   * their row alone (ToolDispatch.dispatchedWithItsRow), in one statement when nothing is in the
   * way (TurnLifecycle.completeAlone and recordCallsAlone; `agent` as the step read it); else in a
   * transaction (`recordInTransaction`). The machine is woken when a call went to it. The answer
   * has at most MAX_TOOL_CALLS_PER_ANSWER tool calls: the model call fails past it (ModelClient).
   */
  const record = (payload: TurnPayload, agent: Agent, setup: TurnSetup, step: number, response: ModelResponse) =>
    Effect.gen(function*() {
      const toolItems = response.output.flatMap((item) => item.type === "tool_call" ? [item] : [])
      if (!Arr.isReadonlyArrayNonEmpty(toolItems)) {
        const completed = yield* lifecycle.completeAlone(agent, payload.turn_id, {
          step,
          usage: response.usage,
          events: outputEvents(payload.turn_id, response.output, [])
        })
        if (completed) return finishedStep
        const { next, outcome } = yield* recordInTransaction(payload, setup, step, response, [])
        yield* launcher.launchNext(payload.agent_id, next)
        return outcome
      }
      const calls = yield* newCalls(payload, setup, toolItems)
      // The calls' rows are written by the statement that appends their events, whose commit the
      // views of the history fold in with the calls' provider ids.
      yield* histories.expectCalls(Arr.map(calls, (call) => call.row))
      const alone = yield* recordCallsAlone(payload, setup, step, response, calls)
      const outcome = Option.isSome(alone) ? alone.value : (yield* recordInTransaction(payload, setup, step, response, calls)).outcome
      const place = setup.machine?.place
      if (place !== undefined && calls.some((call) => call.onMachine)) {
        yield* hub.wake([wakeIdOf(place)])
      }
      return outcome
    })

  /**
   * Records a model response whose tool calls are each dispatched with their row alone
   * (ToolDispatch.dispatchedWithItsRow) in one statement (TurnLifecycle.recordCallsAlone): the
   * step's outcome then; none when a call needs more, or something was in the way.
   */
  const recordCallsAlone = (
    payload: TurnPayload,
    setup: TurnSetup,
    step: number,
    response: ModelResponse,
    calls: Arr.NonEmptyReadonlyArray<NewCall>
  ) =>
    Effect.gen(function*() {
      if (!calls.every((call) => dispatchedWithItsRow(call.item.name, call.tool, setup.machine))) return Option.none<StepOutcome>()
      const outcome: StepOutcome = {
        _tag: "ToolCalls",
        calls: Arr.map(calls, (call) => ({ tool_call_id: call.id, approval: false, then: "result" as const }))
      }
      const machine = setup.machine
      const recorded = yield* lifecycle.recordCallsAlone(
        payload.agent_id,
        payload.turn_id,
        { step, outcome, usage: response.usage },
        outputEvents(payload.turn_id, response.output, calls),
        Arr.map(calls, (call) => call.row),
        calls.flatMap((call) =>
          call.onMachine && machine !== null
            ? [machineRequest(payload.agent_id, { id: call.id, name: call.item.name, input: call.item.input }, machine)]
            : []
        )
      )
      return recorded ? Option.some(outcome) : Option.none<StepOutcome>()
    })

  /**
   * Records a model response and dispatches its tool calls (`calls`, none when it made none), in
   * one transaction with the step's row.
   */
  const recordInTransaction = (
    payload: TurnPayload,
    setup: TurnSetup,
    step: number,
    response: ModelResponse,
    calls: ReadonlyArray<NewCall>
  ) =>
    timeline.transaction(Effect.gen(function*() {
      // A deleted agent's turns are deleted with it.
      const agent = yield* someOrFail(() => new TurnAlreadyEnded())(lifecycle.lockAgent(payload.agent_id))
      if (!Arr.isReadonlyArrayNonEmpty(calls)) {
        // The turn ends: the step's row and the turn's end are one statement, which finds
        // whether the turn still runs (when not, all is rolled back); its output and end one append.
        const next = yield* lifecycle.completeTurn(agent, payload.turn_id, {
          step,
          outcome: finishedStep,
          usage: response.usage,
          events: outputEvents(payload.turn_id, response.output, [])
        })
        if (Option.isNone(next)) return yield* new TurnAlreadyEnded()
        return { outcome: finishedStep, next: next.value }
      }
      yield* timeline.append(
        payload.agent_id,
        outputEvents(payload.turn_id, response.output, calls),
        undefined,
        [yield* toolCalls.insertBefore(Arr.map(calls, (call) => call.row))]
      )
      const planned = yield* Effect.forEach(calls, (call): Effect.Effect<PlannedCall> =>
        Effect.map(
          dispatcher.dispatch(
            payload,
            setup.projectId,
            { id: call.id, name: call.item.name, input: call.item.input },
            call.tool,
            setup.machine
          ),
          (wait) =>
            wait === "approval"
              ? { tool_call_id: call.id, approval: true, then: call.afterApproval }
              : { tool_call_id: call.id, approval: false, then: wait }
        ))
      const outcome: StepOutcome = { _tag: "ToolCalls", calls: planned }
      const { active, recorded } = yield* lifecycle.recordCallsStep(payload.agent_id, payload.turn_id, {
        step,
        outcome,
        usage: response.usage
      })
      if (!active) return yield* new TurnAlreadyEnded()
      if (!recorded) return yield* new StepAlreadyRecorded({ step })
      return { outcome, next: Option.none<TurnId>() }
    })).pipe(
      Effect.catchTag("TurnAlreadyEnded", () => Effect.succeed({ outcome: stoppedStep, next: Option.none<TurnId>() })),
      Effect.catchTag("StepAlreadyRecorded", () =>
        Effect.map(turns.recordedStep(payload.turn_id, step), (recorded) => ({
          outcome: Option.getOrElse(recorded, () => stoppedStep),
          next: Option.none<TurnId>()
        })))
    )

  return { record } as const
})

export class StepRecorder extends Context.Service<StepRecorder, Effect.Success<typeof make>>()("StepRecorder") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      Timeline.layer,
      TurnLifecycle.layer,
      TurnsRepository.layer,
      ToolCallsRepository.layer,
      ToolDispatch.layer,
      TurnLauncher.layer,
      IdGenerator.layer,
      MachineHub.layer,
      TurnHistory.layer
    ])
  )
}
