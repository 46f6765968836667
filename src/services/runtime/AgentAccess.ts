/**
 * An agent as a caller may reach it: the caller's access to the agent's project, and the agent
 * belonging to it (else `not_found`). Every runtime route starts here.
 */
import { Context, Effect, Layer } from "effect"
import { NotFound } from "../../domain/shared/Errors.ts"
import type { AgentId, OrgId, ProjectId } from "../../domain/shared/Ids.ts"
import { someOrFail } from "../shared/Failures.ts"
import { Access } from "../tenancy/Access.ts"
import { AgentsRepository } from "./AgentsRepository.ts"

/** The failure of an agent that is not (or no longer) in the project. */
export const agentNotFound = (projectId: ProjectId, agentId: AgentId) =>
  new NotFound({ error: `Agent ${agentId} not found in project ${projectId}` })

const make = Effect.gen(function*() {
  const agents = yield* AgentsRepository
  const access = yield* Access

  const agentOf = (projectId: ProjectId, agentId: AgentId) =>
    agents.findInProject(projectId, agentId).pipe(
      someOrFail(() => agentNotFound(projectId, agentId))
    )

  /** The agent, for a caller who may read its project. */
  const read = (orgId: OrgId, projectId: ProjectId, agentId: AgentId) =>
    Effect.andThen(access.projectAccess(orgId, projectId), agentOf(projectId, agentId))

  /**
   * The agent's row, with the last sequence of its timeline as this read found it, for a caller
   * who may read its project.
   */
  const readRow = (orgId: OrgId, projectId: ProjectId, agentId: AgentId) =>
    Effect.andThen(
      access.projectAccess(orgId, projectId),
      agents.rowInProject(projectId, agentId).pipe(someOrFail(() => agentNotFound(projectId, agentId)))
    )

  /**
   * Whether the caller may act in the project (write access), for a caller that then finds the
   * agent in the project itself (`TurnLifecycle.lockInProject`) before anything of it is read
   * or written.
   */
  const mayWrite = (orgId: OrgId, projectId: ProjectId) => access.requireProjectAccess(orgId, projectId, "write")

  /** The agent, for a caller who may act in its project (write access). */
  const write = (orgId: OrgId, projectId: ProjectId, agentId: AgentId) =>
    Effect.andThen(mayWrite(orgId, projectId), agentOf(projectId, agentId))

  return { read, readRow, mayWrite, write } as const
})

export class AgentAccess extends Context.Service<AgentAccess, Effect.Success<typeof make>>()("AgentAccess") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      AgentsRepository.layer,
      Access.layer
    ])
  )
}
