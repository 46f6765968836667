/**
 * The rows of agents as this process's last write to each left them: the statement that ended
 * the agent's turn (TurnLifecycle.completeAlone: no current turn, no queued input), or the one
 * that recorded an input (AgentInputs: the input queued, or its turn started), with the
 * timeline's last sequence that statement wrote. The next input to such an agent decides on that
 * row instead of reading it (AgentInputs; docs/runtime.md, "Inputs and the backlog"). A row may
 * be out of date by then (another process, any later write to the agent): what decides on one
 * guards its statement on it (AgentsRepository.lockUnchanged), and reads the row when the guard
 * fails. Of two rows of one agent, the one further along its timeline is kept. Bounded: past
 * MAX_ROWS, the row remembered first is forgotten.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { AgentId } from "../../domain/shared/Ids.ts"
import type { StoredAgent } from "./AgentsRepository.ts"

/** What an input decides on: the agent's fields that never change, and those its runtime's writes do. */
export type InputDecisionRow = Pick<
  StoredAgent,
  "id" | "project_id" | "agent_config_id" | "metadata" | "last_sequence" | "current_turn_id" | "queued_inputs"
>

/** Agents remembered at most: a few MiB of rows. */
const MAX_ROWS = 10_000

const make = Effect.sync(() => {
  const rows = new Map<AgentId, InputDecisionRow>()
  return {
    /**
     * Remembers the agent's row as a statement of this process left it, in place of what was
     * remembered, unless that is further along the agent's timeline (a later statement's).
     */
    remember: (row: InputDecisionRow) =>
      Effect.sync(() => {
        const known = rows.get(row.id)
        if (known !== undefined && known.last_sequence > row.last_sequence) return
        rows.delete(row.id)
        if (rows.size >= MAX_ROWS) rows.delete(rows.keys().next().value!)
        rows.set(row.id, row)
      }),
    /** The agent's remembered row, forgotten as it is taken: it is good for one decision at most. */
    take: (agentId: AgentId) =>
      Effect.sync(() => {
        const row = rows.get(agentId)
        rows.delete(agentId)
        return Option.fromNullishOr(row)
      })
  } as const
})

export class KnownAgentRows extends Context.Service<KnownAgentRows, Effect.Success<typeof make>>()("KnownAgentRows") {
  static readonly layer = Layer.effect(this, make)
}
