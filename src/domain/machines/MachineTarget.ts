/**
 * Where an agent's built-in machine tools run: the first machine source of its compiled config
 * that names a machine or a machine pool, with that source's working directory and environment
 * overlays (docs/machines.md, docs/machine-pools.md).
 */
import { Schema } from "effect"
import type { CompiledAgentConfig, CompiledMachineSource } from "../configuration/agent-config/Compiled.ts"
import { MachineId, type MachinePoolId, type SecretId } from "../shared/Ids.ts"

/** A machine named by the config, or a pool that gives the agent one. */
export type MachinePlace =
  | { readonly _tag: "Machine"; readonly machineId: MachineId }
  | { readonly _tag: "Pool"; readonly poolId: MachinePoolId }

/** What a wake-up of the mailboxes names for a request to `place` (MachineHub.wake): the machine, or the pool that gives one. */
export const wakeIdOf = (place: MachinePlace): MachineId | MachinePoolId =>
  place._tag === "Machine" ? place.machineId : place.poolId

export interface MachineTarget {
  readonly place: MachinePlace
  readonly cwd: string | null
  /** Variables set for commands. */
  readonly env: Readonly<Record<string, string>>
  /** Variables the config's overlays set to `null`: removed from what commands inherit (and from a pool's defaults). */
  readonly unsetEnv: ReadonlyArray<string>
  /** Variables whose values are secrets, revealed by the server when the request is sent. */
  readonly secretEnv: Readonly<Record<string, SecretId>>
}

const isMachineId = Schema.is(MachineId)

const placeOf = (source: CompiledMachineSource): MachinePlace | null =>
  source.machine_id !== undefined && isMachineId(source.machine_id)
    ? { _tag: "Machine", machineId: source.machine_id }
    : source.machine_pool_id !== undefined
    ? { _tag: "Pool", poolId: source.machine_pool_id }
    : null

export const machineTargetOf = (compiled: CompiledAgentConfig): MachineTarget | null => {
  for (const source of compiled.machine_sources ?? []) {
    const place = placeOf(source)
    if (place === null) continue
    const env: Record<string, string> = {}
    const secretEnv: Record<string, SecretId> = {}
    const unsetEnv: Array<string> = []
    for (const [name, value] of Object.entries(source.env_overlay ?? {})) {
      if (value === null) unsetEnv.push(name)
      else env[name] = value
    }
    for (const [name, value] of Object.entries(source.secret_env_overlay ?? {})) {
      if (value === null) unsetEnv.push(name)
      else secretEnv[name] = value
    }
    return { place, cwd: source.cwd ?? null, env, secretEnv, unsetEnv }
  }
  return null
}

/** The config's first source that names the pool (sizes, limits and overlays for its machines). */
export const poolSourceOf = (compiled: CompiledAgentConfig, poolId: MachinePoolId): CompiledMachineSource | undefined =>
  (compiled.machine_sources ?? []).find((source) => source.machine_pool_id === poolId && placeOf(source)?._tag === "Pool")
