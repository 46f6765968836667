/**
 * Interactions (docs/runtime.md, "Tools"): approvals and questions, listed per project or agent,
 * and resolved by a person. Resolving is one transaction: the interaction, its `interaction`
 * event and what it means for its tool call (approved: dispatched; denied: failed; answered:
 * completed with the answer; declined: failed); after the commit the turn's wait is resolved.
 */
import { MachineHub } from "../machines/MachineHub.ts"
import { Context, Effect, Layer, Option } from "effect"
import { InvalidRequest, NotFound, StateTransitionConflict } from "../../domain/shared/Errors.ts"
import type { AgentId, InteractionId, MachineId, MachinePoolId, OrgId, ProjectId, ToolCallId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import type { InteractionKind, InteractionStatus, ResolveInteraction } from "../../domain/runtime/Interactions.ts"
import { machineTargetOf, wakeIdOf } from "../../domain/machines/MachineTarget.ts"
import { AgentConfigsRepository } from "../configuration/AgentConfigsRepository.ts"
import { someOrFail } from "../shared/Failures.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Access } from "../tenancy/Access.ts"
import { AgentAccess } from "./AgentAccess.ts"
import { AgentsRepository } from "./AgentsRepository.ts"
import { InteractionsRepository, type StoredInteraction, toInteraction } from "./InteractionsRepository.ts"
import { Timeline } from "./Timeline.ts"
import { ToolCallsRepository } from "./ToolCallsRepository.ts"
import { runsOnMachine, ToolDispatch } from "./ToolDispatch.ts"
import { TurnLifecycle } from "./TurnLifecycle.ts"
import { PersonalResourceUse } from "./PersonalResourceUse.ts"
import { type Signal, TurnSignals } from "./TurnSignals.ts"

const reason = (message: string | null) => message === null ? "." : `: ${message}`

const make = Effect.gen(function*() {
  const interactions = yield* InteractionsRepository
  const toolCalls = yield* ToolCallsRepository
  const agents = yield* AgentsRepository
  const configs = yield* AgentConfigsRepository
  const access = yield* Access
  const agentAccess = yield* AgentAccess
  const timeline = yield* Timeline
  const lifecycle = yield* TurnLifecycle
  const dispatcher = yield* ToolDispatch
  const signals = yield* TurnSignals
  const hub = yield* MachineHub
  const personalResources = yield* PersonalResourceUse

  const page = (stored: Effect.Effect<ReadonlyArray<StoredInteraction>>) =>
    Effect.map(stored, (found) => found.map(toInteraction))

  /** The interactions of every agent of the project, oldest first, optionally of one status. */
  const listForProject = (
    orgId: OrgId,
    projectId: ProjectId,
    query: ListQuery & { readonly status?: typeof InteractionStatus.Type | undefined }
  ) =>
    Effect.andThen(
      access.projectAccess(orgId, projectId),
      paged(
        listOf("interactions of a project", projectId, query.status),
        query,
        (keyset) => page(interactions.pageForProject(projectId, query.status, keyset)),
        (i) => i.id
      )
    )

  /** The agent's interactions, oldest first. */
  const listForAgent = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, query: ListQuery) =>
    Effect.andThen(
      agentAccess.read(orgId, projectId, agentId),
      paged(
        listOf("interactions of an agent", agentId),
        query,
        (keyset) => page(interactions.pageForAgent(agentId, keyset)),
        (i) => i.id
      )
    )

  /** The compiled tool the agent's config gives `name`, and the machine it runs built-in tools on. */
  const toolOf = (agentId: AgentId, name: string) =>
    Effect.gen(function*() {
      const agent = yield* agents.findById(agentId)
      const compiled = Option.isNone(agent) ? Option.none() : yield* configs.compiledDefinition(agent.value.agent_config_id)
      return Option.match(compiled, {
        onNone: () => ({ tool: undefined, machine: null }),
        onSome: (config) => ({ tool: config.tools?.[name], machine: machineTargetOf(config) })
      })
    })

  /**
   * What the resolution means for the interaction's tool call: the wait it resolves, and the
   * mailbox an approved machine call's request went to (to wake once committed).
   */
  const resolveCall = (
    pending: StoredInteraction,
    toolCallId: ToolCallId,
    resolution: ResolveInteraction,
    answer: string | null
  ) =>
    Effect.gen(function*() {
      const agentId = pending.agent_id
      const call = yield* toolCalls.find(agentId, toolCallId, true).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.die(new Error(`The tool call of interaction ${pending.id} is gone`)),
          onSome: Effect.succeed
        }))
      )
      const message = resolution.message ?? null
      let signal: Signal
      let mailbox: MachineId | MachinePoolId | null = null
      if (pending.kind === "approval") {
        if (resolution.decision === "approve") {
          const payload = { turn_id: pending.turn_id, agent_id: agentId }
          const { machine, tool } = yield* toolOf(agentId, call.name)
          yield* dispatcher.dispatchApproved(payload, pending.project_id, call, tool, machine)
          if (runsOnMachine(call.name, machine)) mailbox = wakeIdOf(machine.place)
        } else {
          yield* dispatcher.failCall(agentId, pending.turn_id, call.id, `The tool call was denied${reason(message)}`)
        }
        signal = { kind: "approval", toolCallId: call.id, token: pending.deferred_token, value: resolution.decision }
      } else {
        if (answer !== null) {
          yield* dispatcher.completeCall(agentId, pending.turn_id, call.id, "succeeded", [{ type: "text", text: answer }])
        } else {
          yield* dispatcher.failCall(agentId, pending.turn_id, call.id, `The question was declined${reason(message)}`)
        }
        signal = { kind: "question", toolCallId: call.id, token: pending.deferred_token, value: "completed" }
      }
      yield* lifecycle.refreshStatus(agentId, pending.turn_id)
      return { signal, mailbox }
    })

  /** An `answer` sent where it would be dropped: it answers a question, with `approve`. */
  const answerNotTaken = (kind: typeof InteractionKind.Type) => {
    const message = kind === "question"
      ? "goes with decision approve; to deny a question, send decision deny and, if you like, a message"
      : "is for questions; an approval takes a decision and, if you like, a message"
    return new InvalidRequest({ error: `answer ${message}`, issues: [{ path: "/answer", message }] })
  }

  /** Resolves a pending interaction of the project, for a caller who may act in it. */
  const resolve = (orgId: OrgId, projectId: ProjectId, interactionId: InteractionId, resolution: ResolveInteraction) =>
    Effect.gen(function*() {
      yield* access.requireProjectAccess(orgId, projectId, "write")
      const { agent_config_id: configId, agent_id: agentId } = yield* interactions.findInProject(projectId, interactionId).pipe(
        someOrFail(() => new NotFound({ error: `Interaction ${interactionId} not found in project ${projectId}` }))
      )
      yield* personalResources.requireForAgentOf(configId)
      const outcome = yield* timeline.transaction(Effect.gen(function*() {
        yield* lifecycle.lockAgent(agentId)
        const pending = yield* interactions.lock(interactionId).pipe(
          someOrFail(() => new NotFound({ error: `Interaction ${interactionId} not found` }))
        )
        if (pending.status !== "pending") {
          return yield* Effect.fail(
            new StateTransitionConflict({ error: `Interaction ${interactionId} is already ${pending.status}` })
          )
        }
        if (resolution.answer !== undefined && (pending.kind !== "question" || resolution.decision !== "approve")) {
          return yield* Effect.fail(answerNotTaken(pending.kind))
        }
        const answer = pending.kind === "question" && resolution.decision === "approve" ? resolution.answer ?? "" : null
        const message = resolution.message ?? null
        const resolved = yield* interactions.resolve({ id: interactionId, decision: resolution.decision, answer, message })
        const summary = answer ?? (resolution.decision === "approve" ? "Approved" : "Denied") + reason(message)
        yield* timeline.append(agentId, [{
          event_kind: "interaction",
          turn_id: pending.turn_id,
          is_opening_event: false,
          interaction_id: interactionId,
          interaction_kind: pending.kind,
          interaction_status: "resolved",
          tool_call_id: pending.tool_call_id,
          content_blocks: [{ type: "text", text: summary }]
        }])
        const call = pending.tool_call_id === null
          ? null
          : yield* resolveCall(pending, pending.tool_call_id, resolution, answer)
        return { resolved, call }
      }))
      if (outcome.call !== null) {
        yield* signals.send([outcome.call.signal])
        // An approved machine tool call's request is in its mailbox now.
        if (outcome.call.mailbox !== null) yield* hub.wake([outcome.call.mailbox])
      }
      return toInteraction(outcome.resolved)
    })

  return { listForProject, listForAgent, resolve } as const
})

export class Interactions extends Context.Service<Interactions, Effect.Success<typeof make>>()("Interactions") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      InteractionsRepository.layer,
      ToolCallsRepository.layer,
      AgentsRepository.layer,
      AgentConfigsRepository.layer,
      Access.layer,
      AgentAccess.layer,
      Timeline.layer,
      TurnLifecycle.layer,
      ToolDispatch.layer,
      TurnSignals.layer,
      MachineHub.layer,
      PersonalResourceUse.layer
    ])
  )
}
