/**
 * Agents (docs/agents-api.md): launching one (with a first input, when the request has one), and
 * reading them. What happens to an agent afterwards belongs to its inputs (AgentInputs), its
 * control (AgentControl), its tool calls (ToolCalls) and interactions (Interactions).
 */
import { Context, Effect, Layer, Option } from "effect"
import { InvalidRequest, NotFound } from "../../domain/shared/Errors.ts"
import { AgentId, type OrgId, type ProjectId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { type AgentStatus, type LaunchAgent, LaunchedAgent } from "../../domain/runtime/Agents.ts"
import { AgentConfigsRepository } from "../configuration/AgentConfigsRepository.ts"
import { someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { Transactions } from "../shared/Transactions.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Access, projectNotFound } from "../tenancy/Access.ts"
import { ProjectsRepository } from "../tenancy/ProjectsRepository.ts"
import { AgentAccess } from "./AgentAccess.ts"
import { AgentInputs } from "./AgentInputs.ts"
import { PersonalResourceUse } from "./PersonalResourceUse.ts"
import { AgentsRepository } from "./AgentsRepository.ts"
import { PoolMachines } from "../machines/PoolMachines.ts"

const make = Effect.gen(function*() {
  const agents = yield* AgentsRepository
  const configs = yield* AgentConfigsRepository
  const agentAccess = yield* AgentAccess
  const agentInputs = yield* AgentInputs
  const poolMachines = yield* PoolMachines
  const access = yield* Access
  const projects = yield* ProjectsRepository
  const personalResources = yield* PersonalResourceUse
  const ids = yield* IdGenerator
  const transactions = yield* Transactions

  /**
   * Inserts agent `agentId` running `agent_config_id`, which must be a config of the project: the
   * agent, and the config it runs. In a transaction, the agent's row is its first write: the
   * statement that inserts it shares the project's row before any other lock on it (a deletion of
   * the project waits for this launch to end, and a launch that waited for a deletion finds no
   * project; ProjectsRepository.shareForLaunch, docs/runtime.md).
   */
  const insert = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, request: LaunchAgent) =>
    Effect.gen(function*() {
      yield* access.requireProjectAccess(orgId, projectId, "write")
      const config = yield* configs.findInProject(projectId, request.agent_config_id)
      if (Option.isNone(config)) {
        // The project's deletion takes its configs with it: a config gone with its project is that
        // deletion (404), not a wrong id.
        if (Option.isNone(yield* projects.findInOrg(orgId, projectId))) return yield* Effect.fail(projectNotFound(projectId))
        return yield* Effect.fail(
          new InvalidRequest({
            error: `agent_config_id: ${request.agent_config_id} is not an agent config of project ${projectId}`,
            issues: [{ path: "/agent_config_id", message: "no agent config with this id in the project" }]
          })
        )
      }
      const compiled = config.value.compiled_definition
      yield* personalResources.requireForConfig(request.agent_config_id, compiled)
      const agent = yield* agents.insert({
        id: agentId,
        org_id: orgId,
        project_id: projectId,
        agent_config_id: request.agent_config_id,
        name: request.name ?? null,
        metadata: request.metadata ?? {}
      }, projects.shareForLaunch(orgId, projectId)).pipe(someOrFail(() => projectNotFound(projectId)))
      return { agent, compiled }
    })

  /**
   * A new agent; with `input`, that input recorded as its first, in the transaction that makes
   * the agent (checked before: a launch makes both or neither), then its turn started. The
   * initial machines of its pool source, if any, are asked for once it is made.
   */
  const launch = (orgId: OrgId, projectId: ProjectId, request: LaunchAgent) =>
    // Only an agent of a workspace session (`launchAlong`'s) waits for a worktree migration.
    launchAlong(orgId, projectId, request).pipe(Effect.catchTag("StateTransitionConflict", Effect.die))

  /**
   * `launch`, with `alongside` run in the transaction that makes the agent, after the agent's
   * row (and before its input): a row naming the agent, such as a workspace session's, made with
   * the agent or not at all.
   */
  const launchAlong = (
    orgId: OrgId,
    projectId: ProjectId,
    request: LaunchAgent,
    alongside?: (agentId: AgentId) => Effect.Effect<unknown>
  ) =>
    Effect.gen(function*() {
      const input = request.input
      const prepared = input === undefined ? undefined : yield* agentInputs.check(projectId, input, "/input")
      const agentId = yield* ids.make(AgentId)
      const made = alongside === undefined
        ? insert(orgId, projectId, agentId, request)
        : Effect.tap(insert(orgId, projectId, agentId, request), () => alongside(agentId))
      if (input === undefined || prepared === undefined) {
        // Alone, the agent's row is one statement: no transaction.
        const { agent, compiled } = yield* (alongside === undefined ? made : transactions.transaction(made))
        yield* poolMachines.provisionInitial(agentId, compiled)
        return new LaunchedAgent({ ...agent })
      }
      // Not interrupted once begun, as an input is not (AgentInputs.submit): its turn starts now.
      return yield* Effect.uninterruptible(Effect.gen(function*() {
        // A new agent has an empty backlog and no idempotency keys yet.
        const [{ compiled }, recorded] = yield* agentInputs.recordWithNewAgent(projectId, agentId, made, input, prepared)
          .pipe(Effect.catchTags({ AgentBacklogFull: Effect.die, IdempotencyKeyConflict: Effect.die }))
        yield* poolMachines.provisionInitial(agentId, compiled)
        const { accepted } = yield* agentInputs.startRecorded(agentId, recorded)
        // The project may be deleted, and the agent with it, once the launch has committed.
        const current = yield* agents.findById(agentId).pipe(someOrFail(() =>
          new NotFound({
            error: `Agent ${agentId} was made, then deleted with project ${projectId} before its launch was answered`
          })
        ))
        return new LaunchedAgent({ ...current, input: accepted })
      }))
    })

  const list = (orgId: OrgId, projectId: ProjectId, query: ListQuery & { readonly status?: AgentStatus | undefined }) =>
    Effect.andThen(
      access.projectAccess(orgId, projectId),
      paged(
        listOf("agents", projectId, query.status),
        query,
        (keyset) => agents.page(projectId, query.status, keyset),
        (agent) => agent.id
      )
    )

  return { launch, launchAlong, list, get: agentAccess.read } as const
})

export class Agents extends Context.Service<Agents, Effect.Success<typeof make>>()("Agents") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      PersonalResourceUse.layer,
      AgentsRepository.layer,
      AgentConfigsRepository.layer,
      AgentAccess.layer,
      AgentInputs.layer,
      Access.layer,
      ProjectsRepository.layer,
      IdGenerator.layer,
      Transactions.layer,
      PoolMachines.layer
    ])
  )
}
