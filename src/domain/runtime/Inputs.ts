/** Agent inputs: each opens a turn, at once when the agent is idle, else from the backlog. */
import { Schema } from "effect"
import { ActorId, AgentId, InputId, TurnId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { ContentBlock, SubmittedContentBlock } from "./ContentBlocks.ts"
import { AgentInputEvent } from "./Events.ts"
import { strict } from "../shared/Strict.ts"

export const InputStatus = Schema.Literal("queued", "started", "withdrawn")

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
    Schema.minItems(1),
    Schema.filter((blocks) => !blocks.every(isEmptyText), {
      message: () => "must hold some content: every block is empty text; send text or media"
    })
  ),
  input_idempotency_key: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255))),
  actor_id: Schema.optional(ActorId)
}).annotations(strict)
export type SendInput = typeof SendInput.Type

/** The answer to an input: its timeline event, and whether it started a turn or waits in the backlog. */
export class InputAccepted extends Schema.Class<InputAccepted>("InputAccepted")({
  event: AgentInputEvent,
  disposition: Schema.Literal("started", "queued")
}) {}
