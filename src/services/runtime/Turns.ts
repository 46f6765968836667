/** Turns as the API reads them (src/domain/runtime/Turns.ts). */
import { Context, Effect, Layer } from "effect"
import { NotFound } from "../../domain/shared/Errors.ts"
import type { AgentId, OrgId, ProjectId, TurnId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import { someOrFail } from "../shared/Failures.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { AgentAccess } from "./AgentAccess.ts"
import { TurnsRepository } from "./TurnsRepository.ts"

const make = Effect.gen(function*() {
  const turns = yield* TurnsRepository
  const agentAccess = yield* AgentAccess

  /** The agent's turns, oldest first. */
  const list = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, query: ListQuery) =>
    Effect.andThen(
      agentAccess.read(orgId, projectId, agentId),
      paged(listOf("turns", agentId), query, (keyset) => turns.page(agentId, keyset), (turn) => turn.id)
    )

  const get = (orgId: OrgId, projectId: ProjectId, agentId: AgentId, turnId: TurnId) =>
    Effect.andThen(
      agentAccess.read(orgId, projectId, agentId),
      turns.find(agentId, turnId).pipe(
        someOrFail(() => new NotFound({ error: `Turn ${turnId} not found for agent ${agentId}` }))
      )
    )

  return { list, get } as const
})

export class Turns extends Context.Service<Turns, Effect.Success<typeof make>>()("Turns") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      TurnsRepository.layer,
      AgentAccess.layer
    ])
  )
}
