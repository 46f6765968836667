/** Agent inputs: each opens a turn, at once when the agent is idle, else from the backlog. */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { ActorId, AgentId, InputId, TurnId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { ContentBlock, SubmittedContentBlock } from "./ContentBlocks.ts"
import { AgentInputEvent } from "./Events.ts"

export const InputStatus = Schema.Literals(["queued", "started", "withdrawn"])

/** An input in the backlog (or already started). */
export class AgentInput extends Schema.Class<AgentInput>("AgentInput")({
  id: InputId,
  agent_id: AgentId,
  turn_id: TurnId,
  status: InputStatus,
  event_sequence: Schema.Int,
  content_blocks: Schema.Array(ContentBlock),
  actor_id: Schema.NullOr(ActorId),
  input_idempotency_key: Schema.NullOr(Schema.String),
  created_at: Timestamp
}) {}

/** A block that says nothing: text that is empty or only white space. */
const isEmptyText = (block: SubmittedContentBlock) => block.type === "text" && block.text.trim() === ""

export const SendInput = Schema.Struct({
  content_blocks: Schema.Array(SubmittedContentBlock).pipe(
    Schema.check(Schema.isMinLength(1)),
    Schema.check(Schema.makeFilter((blocks) => !blocks.every(isEmptyText), {
      message: "must hold some content: every block is empty text; send text or media"
    }))
  ),
  input_idempotency_key: optional(Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(255)))),
  actor_id: optional(ActorId)
})
export type SendInput = typeof SendInput.Type

/** The answer to an input: its timeline event, and whether it started a turn or waits in the backlog. */
export class InputAccepted extends Schema.Class<InputAccepted>("InputAccepted")({
  event: AgentInputEvent,
  disposition: Schema.Literals(["started", "queued"])
}) {}
