/**
 * Where an agent's built-in machine tools run: the first machine source of its compiled config
 * that names a machine, with that source's working directory and environment overlays (docs/machines.md).
 */
import { Schema } from "effect"
import type { CompiledAgentConfig } from "../configuration/agent-config/Compiled.ts"
import { MachineId, type SecretId } from "../shared/Ids.ts"

export interface MachineTarget {
  readonly machineId: MachineId
  readonly cwd: string | null
  /** Variables set for commands; a `null` of the config (unset) is left out: the daemon only adds variables. */
  readonly env: Readonly<Record<string, string>>
  /** Variables whose values are secrets, revealed by the server when the request is sent. */
  readonly secretEnv: Readonly<Record<string, SecretId>>
}

const isMachineId = Schema.is(MachineId)

export const machineTargetOf = (compiled: CompiledAgentConfig): MachineTarget | null => {
  const source = (compiled.machine_sources ?? []).find((source) => source.machine_id !== undefined && isMachineId(source.machine_id))
  if (source === undefined || source.machine_id === undefined || !isMachineId(source.machine_id)) return null
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(source.env_overlay ?? {})) if (value !== null) env[name] = value
  const secretEnv: Record<string, SecretId> = {}
  for (const [name, value] of Object.entries(source.secret_env_overlay ?? {})) if (value !== null) secretEnv[name] = value
  return { machineId: source.machine_id, cwd: source.cwd ?? null, env, secretEnv }
}
