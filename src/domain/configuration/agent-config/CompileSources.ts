/** Compiling what a config draws on: machine sources, skills and memory stores. */
import type { SecretId } from "../../shared/Ids.ts"
import type { CompiledMachineSource, CompiledMemoryStore, CompiledSkill } from "./Compiled.ts"
import type { CompileContext, Path } from "./CompileContext.ts"
import type { MachineSource, MemoryStore, SkillReference } from "./Definition.ts"
import { skillKey } from "./References.ts"

/** The secret environment of a machine source, names resolved to ids; `null` unsets a variable. */
const compileSecretEnv = (context: CompileContext, at: Path, source: MachineSource) => {
  if (source.secret_env_overlay === undefined) return undefined
  const secretEnv: Record<string, SecretId | null> = {}
  for (const [env, name] of Object.entries(source.secret_env_overlay)) {
    if (source.env_overlay !== undefined && Object.hasOwn(source.env_overlay, env)) {
      context.problem([...at, "secret_env_overlay", env], `${env} is set in env_overlay too; set it in one of them`, "key")
    }
    if (name === null) {
      secretEnv[env] = null
    } else {
      const id = context.secretId([...at, "secret_env_overlay", env], name)
      if (id !== undefined) secretEnv[env] = id
    }
  }
  return secretEnv
}

export const compileMachineSources = (
  context: CompileContext,
  path: Path,
  sources: ReadonlyArray<MachineSource>
): Array<CompiledMachineSource> =>
  sources.map((source, index) => {
    const at = [...path, index]
    if ((source.machine_id === undefined) === (source.machine_pool_id === undefined)) {
      context.problem(at, "give exactly one of machine_id or machine_pool_id")
    }
    const machineId = source.machine_id === undefined ? undefined : context.resolutions.machines.get(source.machine_id)
    if (source.machine_id !== undefined) {
      if (machineId !== undefined) {
        context.resolved([...at, "machine_id"], machineId)
      } else {
        context.problem(
          [...at, "machine_id"],
          `no machine ${JSON.stringify(source.machine_id)} is usable by this project (a machine of the organization ` +
            "granted to it, or your own personal machine, by id or name); check it or grant the machine to the project"
        )
      }
    }
    if (source.machine_pool_id !== undefined && !context.resolutions.machinePools.has(source.machine_pool_id)) {
      context.problem(
        [...at, "machine_pool_id"],
        `no machine pool ${source.machine_pool_id} is granted to this project; check the id, or grant the organization's pool to the project`
      )
    }
    if (
      source.initial_num_machines !== undefined && source.max_machines !== undefined &&
      source.initial_num_machines > source.max_machines
    ) {
      context.problem([...at, "initial_num_machines"], `must be at most max_machines (${source.max_machines})`)
    }
    const { secret_env_overlay: _, ...rest } = source
    const secretEnv = compileSecretEnv(context, at, source)
    return {
      ...rest,
      ...(machineId === undefined ? {} : { machine_id: machineId }),
      ...(rest.machine_pool_id === undefined ? {} : { machine_pool_id: rest.machine_pool_id }),
      ...(secretEnv === undefined ? {} : { secret_env_overlay: secretEnv })
    }
  })

export const compileSkills = (
  context: CompileContext,
  path: Path,
  refs: ReadonlyArray<SkillReference>
): Array<CompiledSkill> => {
  const compiled: Array<CompiledSkill> = []
  const seen = new Set<string>()
  refs.forEach((ref, index) => {
    const at = [...path, index]
    if ((ref.name === undefined) === (ref.id === undefined)) {
      context.problem(at, "give exactly one of name or id")
      return
    }
    const field = ref.id !== undefined ? "id" : "name"
    const resolution = context.resolutions.skills.get(skillKey(ref))
    if (resolution === undefined) {
      context.problem(
        [...at, field],
        `no skill ${field === "id" ? ref.id : `named "${ref.name}"`} is usable by this project ` +
          "(owned by it, granted to it, or personal to you); check the name or grant the skill to the project"
      )
      return
    }
    if (resolution._tag === "Ambiguous") {
      context.problem(
        [...at, field],
        `several skills named "${ref.name}" are granted to this project (${resolution.ids.join(", ")}); refer to one by id`
      )
      return
    }
    if (seen.has(resolution.id)) {
      context.problem(at, `skill ${resolution.id} is listed twice`)
      return
    }
    seen.add(resolution.id)
    if (ref.version !== undefined && ref.version > resolution.latestVersion) {
      context.problem([...at, "version"], `skill "${resolution.name}" has versions 1 to ${resolution.latestVersion}`)
      return
    }
    const version = ref.version ?? resolution.latestVersion
    context.resolved(at, `${resolution.id}@${version}`)
    compiled.push({ skill_id: resolution.id, name: resolution.name, version })
  })
  return compiled
}

/** Memory stores by name, each listed once. */
export const compileMemoryStores = (
  context: CompileContext,
  path: Path,
  stores: ReadonlyArray<MemoryStore>
): Array<CompiledMemoryStore> => {
  const names = new Set<string>()
  return stores.map((store, index) => {
    if (names.has(store.name)) context.problem([...path, index, "name"], `"${store.name}" is listed twice`)
    names.add(store.name)
    return { name: store.name, access: store.access ?? "read_write" }
  })
}
