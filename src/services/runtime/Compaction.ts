/**
 * Compaction (docs/runtime.md, "Compaction"): when a model request does not fit the context
 * window, the finished turns of the agent are summarized by the model into a `compaction` event,
 * which replaces them in later requests.
 */
import { Context, Effect, Layer, Option, Result } from "effect"
import type { Agent } from "../../domain/runtime/Agents.ts"
import type { TurnId } from "../../domain/shared/Ids.ts"
import { ConversationItems } from "./model/ConversationItems.ts"
import { ModelClient } from "./model/ModelClient.ts"
import type { ConversationItem } from "./model/ModelMessages.ts"
import { summaryConversation } from "./SummaryInput.ts"
import { Timeline } from "./Timeline.ts"
import type { History } from "./TurnHistory.ts"
import { TurnCancellation } from "./TurnCancellation.ts"
import { TurnLifecycle } from "./TurnLifecycle.ts"
import type { TurnSetup } from "./TurnSetups.ts"
import { TurnsRepository } from "./TurnsRepository.ts"

const COMPACTION_INSTRUCTION =
  "You compact conversations so that an assistant can continue them with less context. Summarize the " +
  "conversation you are given: the user's goals and requests, decisions made, facts learned, tool calls " +
  "and results that still matter, and anything left open. Be concise and complete; answer with the summary only."

const SUMMARY_REQUEST: ConversationItem = {
  type: "user_message",
  content: [{ type: "text", text: "Summarize the conversation above." }]
}

/** Why compacting did not happen: nothing to compact, the turn was cancelled, or the model failed. */
export type CompactionProblem =
  | { readonly _tag: "NothingToCompact" }
  | { readonly _tag: "Cancelled" }
  | { readonly _tag: "ModelFailed"; readonly message: string }

const make = Effect.gen(function*() {
  const client = yield* ModelClient
  const cancellation = yield* TurnCancellation
  const timeline = yield* Timeline
  const lifecycle = yield* TurnLifecycle
  const turns = yield* TurnsRepository

  /** Summarizes the finished turns of the history into a `compaction` event of `turnId`; the problem when it could not. */
  const compact = (
    agent: Agent,
    turnId: TurnId,
    setup: TurnSetup,
    history: History
  ): Effect.Effect<Option.Option<CompactionProblem>> =>
    Effect.gen(function*() {
      const ended = history.view.ended
      if (ended.length === 0) return Option.some<CompactionProblem>({ _tag: "NothingToCompact" })
      const conversation = summaryConversation(history.view.settled.toArray(), SUMMARY_REQUEST, COMPACTION_INSTRUCTION, setup.budget)
      const answer = yield* cancellation.unlessCancelled(
        turnId,
        client.respond({
          ...setup.base,
          instruction: COMPACTION_INSTRUCTION,
          tools: [],
          conversation: ConversationItems.of(conversation)
        })
      )
      if (Option.isNone(answer)) return Option.some<CompactionProblem>({ _tag: "Cancelled" })
      if (Result.isFailure(answer.value)) {
        if (answer.value.failure.notCalled !== true) yield* turns.addFailedCall(turnId)
        return Option.some<CompactionProblem>({
          _tag: "ModelFailed",
          message: `Compacting earlier turns failed: the model provider answered: ${answer.value.failure.message}`
        })
      }
      const response = answer.value.success
      const summary = response.output.flatMap((item) => item.type === "assistant_text" ? [item.text] : []).join("")
      const through = ended.at(ended.length - 1).endSequence
      yield* timeline.transaction(Effect.gen(function*() {
        yield* lifecycle.lockAgent(agent.id)
        if (!(yield* turns.isActive(turnId, true))) return
        yield* timeline.append(agent.id, [{
          event_kind: "compaction",
          turn_id: turnId,
          is_opening_event: false,
          compacted_through_sequence: through,
          content_blocks: [{ type: "text", text: summary }]
        }])
        yield* turns.addUsage(turnId, response.usage, 1)
      }))
      return Option.none<CompactionProblem>()
    })

  return { compact } as const
})

export class Compaction extends Context.Service<Compaction, Effect.Success<typeof make>>()("Compaction") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      ModelClient.layer,
      TurnCancellation.layer,
      Timeline.layer,
      TurnLifecycle.layer,
      TurnsRepository.layer
    ])
  )
}
