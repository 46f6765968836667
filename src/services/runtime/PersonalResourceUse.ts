/**
 * A personal machine and a personal secret are their owner's alone (docs/machines.md,
 * docs/secrets.md): an agent whose config runs its built-in tools on one, or uses one (a machine
 * source's secret environment, an MCP server's token, a webhook's signing secret, git
 * credentials), takes new work (a launch, an input) and what steers its turns (a tool result, an
 * approval or an answer) from that owner only. Anyone else with write
 * access to the project is `forbidden`, told which of the config's things are whose and what to
 * use instead. A config never changes and neither does the owner of a machine or a secret, so
 * what a config uses is read once and remembered.
 */
import { Context, Effect, Layer, Option } from "effect"
import { type CompiledAgentConfig, secretIdsOf } from "../../domain/configuration/agent-config/Compiled.ts"
import { machineTargetOf } from "../../domain/machines/MachineTarget.ts"
import { Forbidden } from "../../domain/shared/Errors.ts"
import type { AgentConfigId, UserId } from "../../domain/shared/Ids.ts"
import { AgentConfigsRepository } from "../configuration/AgentConfigsRepository.ts"
import { SecretsRepository } from "../configuration/SecretsRepository.ts"
import { MachinesRepository } from "../machines/MachinesRepository.ts"
import { Access } from "../tenancy/Access.ts"

/** A machine or a secret a config uses that belongs to one user, as the refusal names it. */
interface PersonalResource {
  /** `the personal machine laptop (mch_…)`. */
  readonly described: string
  readonly owner: UserId
}

/** Configs remembered at most (least recently used forgotten). */
const REMEMBERED_CONFIGS = 10_000

const make = Effect.gen(function*() {
  const configs = yield* AgentConfigsRepository
  const machines = yield* MachinesRepository
  const secrets = yield* SecretsRepository
  const access = yield* Access

  /**
   * Least recently used first. A Map, not Effect's Cache: a Cache runs its lookup in the context
   * it was made in, outside the caller's transaction, and on the embedded database (one
   * connection, held by that transaction) the lookup would wait for ever.
   */
  const remembered = new Map<AgentConfigId, ReadonlyArray<PersonalResource>>()

  const personalMachineOf = (compiled: CompiledAgentConfig) =>
    Effect.gen(function*() {
      const place = machineTargetOf(compiled)?.place
      if (place === undefined || place._tag !== "Machine") return []
      const machine = yield* machines.findById(place.machineId)
      return Option.match(machine, {
        onNone: (): Array<PersonalResource> => [],
        onSome: (found): Array<PersonalResource> =>
          found.owner_user_id === null
            ? []
            : [{ described: `the personal machine ${found.name} (${found.id})`, owner: found.owner_user_id }]
      })
    })

  const personalSecretsOf = (compiled: CompiledAgentConfig) => {
    const ids = secretIdsOf(compiled)
    return ids.length === 0 ? Effect.succeed([]) : Effect.map(
      secrets.personalAmong(ids),
      (rows) => rows.map((secret): PersonalResource => ({
        described: `the personal secret ${secret.name} (${secret.id})`,
        owner: secret.owner_user_id
      }))
    )
  }

  const remember = (configId: AgentConfigId, personal: ReadonlyArray<PersonalResource>) => {
    remembered.delete(configId)
    remembered.set(configId, personal)
    if (remembered.size > REMEMBERED_CONFIGS) remembered.delete(remembered.keys().next().value!)
  }

  const check = (personal: ReadonlyArray<PersonalResource>) =>
    personal.length === 0 ? Effect.void : Effect.flatMap(access.callerUserId, (caller) => {
      const others = personal.filter((resource) => resource.owner !== caller)
      return others.length === 0 ? Effect.void : Effect.fail(
        new Forbidden({
          error: `This agent's config uses ${others.map((resource) => resource.described).join(" and ")}; ` +
            "only their owner may launch agents from the config, send them inputs, post their tool results or " +
            "resolve their approvals and questions. " +
            "For an agent others use, name an organization machine granted to the project, or a machine pool, " +
            "and organization secrets granted to it"
        })
      )
    })

  /** For a launch from `compiled` (the config just read). */
  const requireForConfig = (configId: AgentConfigId, compiled: CompiledAgentConfig) =>
    Effect.gen(function*() {
      const personal = [...yield* personalMachineOf(compiled), ...yield* personalSecretsOf(compiled)]
      remember(configId, personal)
      return yield* check(personal)
    })

  /** For an input to an agent of the config `configId`. */
  const requireForAgentOf = (configId: AgentConfigId) =>
    Effect.gen(function*() {
      const known = remembered.get(configId)
      if (known !== undefined) {
        remember(configId, known)
        return yield* check(known)
      }
      const compiled = yield* configs.compiledDefinition(configId)
      return yield* Option.match(compiled, {
        onNone: () => Effect.void,
        onSome: (found) => requireForConfig(configId, found)
      })
    })

  return { requireForConfig, requireForAgentOf } as const
})

export class PersonalResourceUse
  extends Context.Service<PersonalResourceUse, Effect.Success<typeof make>>()("PersonalResourceUse")
{
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      AgentConfigsRepository.layer,
      MachinesRepository.layer,
      SecretsRepository.layer,
      Access.layer
    ])
  )
}
