/**
 * A personal machine is its owner's alone (docs/machines.md): an agent whose config runs its
 * built-in tools on one takes new work (a launch, an input) from that owner only. Anyone else
 * with write access to the project is `forbidden`, saying whose machine it is and what to use
 * instead. A config never changes and neither does a machine's owner, so what a config runs on
 * is read once and remembered.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { CompiledAgentConfig } from "../../domain/configuration/agent-config/Compiled.ts"
import { machineTargetOf } from "../../domain/machines/MachineTarget.ts"
import { Forbidden } from "../../domain/shared/Errors.ts"
import type { AgentConfigId, MachineId, UserId } from "../../domain/shared/Ids.ts"
import { AgentConfigsRepository } from "../configuration/AgentConfigsRepository.ts"
import { MachinesRepository } from "../machines/MachinesRepository.ts"
import { Access } from "../tenancy/Access.ts"

/** The personal machine a config's built-in tools run on. */
interface PersonalMachine {
  readonly id: MachineId
  readonly name: string
  readonly owner: UserId
}

/** Configs remembered at most (least recently used forgotten). */
const REMEMBERED_CONFIGS = 10_000

const make = Effect.gen(function*() {
  const configs = yield* AgentConfigsRepository
  const machines = yield* MachinesRepository
  const access = yield* Access

  /**
   * Least recently used first; null: the config runs on no personal machine. A Map, not Effect's
   * Cache: a Cache runs its lookup in the context it was made in, outside the caller's
   * transaction, and on the embedded database (one connection, held by that transaction) the
   * lookup would wait for ever.
   */
  const remembered = new Map<AgentConfigId, PersonalMachine | null>()

  const personalMachineOf = (compiled: CompiledAgentConfig) =>
    Effect.gen(function*() {
      const place = machineTargetOf(compiled)?.place
      if (place === undefined || place._tag !== "Machine") return null
      const machine = yield* machines.findById(place.machineId)
      return Option.match(machine, {
        onNone: () => null,
        onSome: (found): PersonalMachine | null =>
          found.owner_user_id === null ? null : { id: found.id, name: found.name, owner: found.owner_user_id }
      })
    })

  const remember = (configId: AgentConfigId, personal: PersonalMachine | null) => {
    remembered.delete(configId)
    remembered.set(configId, personal)
    if (remembered.size > REMEMBERED_CONFIGS) remembered.delete(remembered.keys().next().value!)
  }

  const check = (personal: PersonalMachine | null) =>
    personal === null ? Effect.void : Effect.flatMap(access.callerUserId, (caller) =>
      caller === personal.owner ? Effect.void : Effect.fail(
        new Forbidden({
          error: `This agent's config runs its tools on ${personal.name} (${personal.id}), a personal machine; ` +
            "only its owner may launch agents from the config or send them inputs. " +
            "For an agent others use, name an organization machine granted to the project, or a machine pool"
        })
      ))

  /** For a launch from `compiled` (the config just read). */
  const requireForConfig = (configId: AgentConfigId, compiled: CompiledAgentConfig) =>
    Effect.flatMap(personalMachineOf(compiled), (personal) => {
      remember(configId, personal)
      return check(personal)
    })

  /** For an input to an agent of the config `configId`. */
  const requireForAgentOf = (configId: AgentConfigId) =>
    Effect.gen(function*() {
      if (remembered.has(configId)) {
        const personal = remembered.get(configId)!
        remember(configId, personal)
        return yield* check(personal)
      }
      const compiled = yield* configs.compiledDefinition(configId)
      return yield* Option.match(compiled, {
        onNone: () => Effect.void,
        onSome: (found) => requireForConfig(configId, found)
      })
    })

  return { requireForConfig, requireForAgentOf } as const
})

export class PersonalMachineUse extends Context.Service<PersonalMachineUse, Effect.Success<typeof make>>()("PersonalMachineUse") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      AgentConfigsRepository.layer,
      MachinesRepository.layer,
      Access.layer
    ])
  )
}
