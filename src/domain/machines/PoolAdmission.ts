/**
 * The pure rules of admission to a machine pool (docs/machine-pools.md, "Admission"): the size a
 * machine source asks for and whether the pool can ever give it, whether one more machine stays
 * within the pool's totals, and the pool's defaults each admitted call receives under the
 * source's overlays.
 */
import type { CompiledMachineSource } from "../configuration/agent-config/Compiled.ts"
import type { SecretId } from "../shared/Ids.ts"
import type { PoolSettings } from "./MachinePools.ts"

/** A machine's size as the totals count it. */
export interface SizedMachine {
  readonly cpu: number | null
  readonly memory_mb: number | null
}

/** What the pool adds to a call's request when it admits it. */
export interface RequestDefaults {
  readonly cwd: string | null
  readonly env: Readonly<Record<string, string>>
  /** Variables whose values are secrets: their secrets' ids. */
  readonly secretEnv: Readonly<Record<string, SecretId>>
}

export interface Size {
  readonly cpu: number | null
  readonly memoryMb: number | null
}

export interface Usage {
  machines: number
  cpu: number
  memoryMb: number
}

export const usageOf = (held: ReadonlyArray<SizedMachine>): Usage => ({
  machines: held.length,
  cpu: held.reduce((sum, machine) => sum + (machine.cpu ?? 0), 0),
  memoryMb: held.reduce((sum, machine) => sum + (machine.memory_mb ?? 0), 0)
})

/** The machine size a source asks for, or why the pool cannot give it. */
export const sizeOf = (pool: PoolSettings, source: CompiledMachineSource): Size | string => {
  const cpu = pool.provider === "local" ? null : source.machine_cpu ?? pool.default_machine_cpu
  const memoryMb = source.machine_memory_mb ?? pool.default_machine_memory_mb
  const bounds = [
    ["CPUs", cpu, pool.min_machine_cpu, pool.max_machine_cpu, pool.max_total_cpu],
    ["MB of memory", memoryMb, pool.min_machine_memory_mb, pool.max_machine_memory_mb, pool.max_total_memory_mb]
  ] as const
  for (const [what, value, min, max, total] of bounds) {
    if (value === null) continue
    if (min !== null && value < min) return `a machine of ${value} ${what}, below the pool's minimum of ${min}`
    if (max !== null && value > max) return `a machine of ${value} ${what}, above the pool's maximum of ${max}`
    if (total !== null && value > total) return `a machine of ${value} ${what}, more than the pool's total of ${total}`
  }
  return { cpu, memoryMb }
}

/** The names `overlay` unsets (`null`) removed from `defaults`. */
const withoutUnset = <V>(defaults: Readonly<Record<string, V>>, overlay: Readonly<Record<string, unknown>> | undefined) =>
  Object.fromEntries(Object.entries(defaults).filter(([name]) => overlay?.[name] !== null))

/**
 * The pool's defaults for each call (resolved again for every command: a rotated secret or a
 * changed default applies), under the source's overlays, which the call carries already.
 */
export const requestDefaults = (pool: PoolSettings, source: CompiledMachineSource): RequestDefaults => ({
  cwd: pool.default_cwd,
  env: withoutUnset(pool.default_machine_env, source.env_overlay),
  secretEnv: withoutUnset(pool.default_machine_secret_env, source.secret_env_overlay)
})

/** Whether one more machine of `size` stays within the pool's totals. */
export const fits = (pool: PoolSettings, usage: Usage, size: Size) =>
  usage.machines + 1 <= pool.max_total_machines &&
  (pool.max_total_cpu === null || size.cpu === null || usage.cpu + size.cpu <= pool.max_total_cpu) &&
  (pool.max_total_memory_mb === null || size.memoryMb === null || usage.memoryMb + size.memoryMb <= pool.max_total_memory_mb)
