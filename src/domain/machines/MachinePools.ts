/**
 * Machine pools (mpo_, docs/machine-pools.md): where an agent's machines would be provisioned
 * from, a provider of a fixed set with its config, default machine sizes and environment, and
 * limits. Provisioning is not built yet; this module holds the resource, its bodies and the pure
 * rules of which fields each provider requires and refuses.
 */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { canonicalJson } from "../configuration/agent-config/Canonical.ts"
import type { JsonValue } from "../configuration/agent-config/Definition.ts"
import { MAX_INT } from "../configuration/Models.ts"
import { Description } from "../configuration/Secrets.ts"
import { EnvRecord } from "../shared/EnvName.ts"
import type { Issue } from "../shared/Errors.ts"
import { MachinePoolGrantId, MachinePoolId, OrgId, ProjectId, SecretId } from "../shared/Ids.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { MachineMetadata, MachineMetadataInput } from "./MachineMetadata.ts"

/** The machine providers this server knows. */
export const MACHINE_PROVIDERS = ["docker", "local"] as const
export const MachineProvider = Schema.Literals(MACHINE_PROVIDERS).annotate({
  message: `must be one of: ${MACHINE_PROVIDERS.join(", ")}`
})
export type MachineProvider = typeof MachineProvider.Type

/** tenant: made and changed through this API; cluster: declared by the operator. */
export const PoolManagementKind = Schema.Literals(["tenant", "cluster"])
export type PoolManagementKind = typeof PoolManagementKind.Type

export const MIN_IDLE_MINUTES = 5

const between = (min: number, max: number) =>
  Schema.Int.pipe(
    Schema.check(Schema.isBetween({ minimum: min, maximum: max }, { message: `must be an integer from ${min} to ${max}` }))
  )

/** Every size field and limit: a positive integer (docs/machine-pools.md, "Sizes and limits"). */
export const SizeField = between(1, MAX_INT)
export const IdleMinutes = between(MIN_IDLE_MINUTES, MAX_INT)

export const MachineEnv = EnvRecord(Schema.String)
/** Environment names mapped to the ids of organization secrets whose values they receive. */
export const MachineSecretEnv = EnvRecord(SecretId)

/** A JSON object whose shape the provider decides (`provider_config`, `default_machine_provider_options`). */
export const ProviderObject = Schema.Record(Schema.String, Schema.Unknown)
export type ProviderObject = typeof ProviderObject.Type

export const PoolUsage = Schema.Struct({
  machines: Schema.Int,
  cpu: Schema.Int,
  memory_mb: Schema.Int
}).annotate({ identifier: "MachinePoolUsage" })

/** The settings of a pool: what a create body sets and a PATCH changes, defaults applied. */
export const PoolSettingsFields = {
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  provider: MachineProvider,
  provider_auth_secret_id: SecretId,
  provider_config: ProviderObject,
  default_machine_cpu: Schema.NullOr(Schema.Int),
  default_machine_memory_mb: Schema.NullOr(Schema.Int),
  default_machine_env: MachineEnv,
  default_machine_secret_env: MachineSecretEnv,
  default_machine_provider_options: ProviderObject,
  default_cwd: Schema.NullOr(Schema.String),
  runtime_protection_enabled: Schema.Boolean,
  max_total_machines: Schema.Int,
  max_total_cpu: Schema.NullOr(Schema.Int),
  max_total_memory_mb: Schema.NullOr(Schema.Int),
  min_machine_cpu: Schema.NullOr(Schema.Int),
  min_machine_memory_mb: Schema.NullOr(Schema.Int),
  max_machine_cpu: Schema.NullOr(Schema.Int),
  max_machine_memory_mb: Schema.NullOr(Schema.Int),
  delete_after_idle_minutes: Schema.NullOr(Schema.Int),
  metadata: MachineMetadata
}
export const PoolSettings = Schema.Struct(PoolSettingsFields)
export type PoolSettings = typeof PoolSettings.Type

const encodeSettings = Schema.encodeSync(PoolSettings)
/** The settings as one comparable text (a create body sent again, a cluster pool declared again). */
export const settingsText = (settings: PoolSettings) => canonicalJson(encodeSettings(settings) as unknown as JsonValue)

export class MachinePool extends Schema.Class<MachinePool>("MachinePool")({
  id: MachinePoolId,
  org_id: OrgId,
  management_kind: PoolManagementKind,
  ...PoolSettingsFields,
  created_at: Timestamp,
  updated_at: Timestamp,
  /** Present on list and get; zero until provisioning is built (docs/machine-pools.md). */
  usage: optional(PoolUsage)
}) {}

const optionalSize = optional(SizeField)

export const CreateMachinePool = Schema.Struct({
  name: ResourceName,
  provider: MachineProvider,
  provider_auth_secret_id: SecretId,
  default_machine_provider_options: ProviderObject,
  max_total_machines: SizeField,
  description: optional(Description),
  provider_config: optional(ProviderObject),
  default_machine_cpu: optionalSize,
  default_machine_memory_mb: optionalSize,
  max_total_cpu: optionalSize,
  max_total_memory_mb: optionalSize,
  min_machine_cpu: optionalSize,
  min_machine_memory_mb: optionalSize,
  max_machine_cpu: optionalSize,
  max_machine_memory_mb: optionalSize,
  default_machine_env: optional(MachineEnv),
  default_machine_secret_env: optional(MachineSecretEnv),
  default_cwd: optional(Schema.String.pipe(Schema.check(Schema.isMinLength(1, { message: "must not be empty" })))),
  runtime_protection_enabled: optional(Schema.Boolean),
  delete_after_idle_minutes: optional(IdleMinutes),
  metadata: optional(MachineMetadataInput)
})
export type CreateMachinePool = typeof CreateMachinePool.Type

const nullableSize = optional(Schema.NullOr(SizeField))

/**
 * The tenant-editable settings: each field present is changed, `null` clears an optional one.
 * The provider and the management kind are fixed when the pool is made.
 */
export const UpdateMachinePool = Schema.Struct({
  name: optional(ResourceName),
  description: optional(Schema.NullOr(Description)),
  provider_auth_secret_id: optional(SecretId),
  provider_config: optional(ProviderObject),
  default_machine_provider_options: optional(ProviderObject),
  max_total_machines: optional(SizeField),
  default_machine_cpu: nullableSize,
  default_machine_memory_mb: nullableSize,
  max_total_cpu: nullableSize,
  max_total_memory_mb: nullableSize,
  min_machine_cpu: nullableSize,
  min_machine_memory_mb: nullableSize,
  max_machine_cpu: nullableSize,
  max_machine_memory_mb: nullableSize,
  default_machine_env: optional(MachineEnv),
  default_machine_secret_env: optional(MachineSecretEnv),
  default_cwd: optional(Schema.NullOr(Schema.String.pipe(Schema.check(Schema.isMinLength(1, { message: "must not be empty" }))))),
  runtime_protection_enabled: optional(Schema.Boolean),
  delete_after_idle_minutes: optional(Schema.NullOr(IdleMinutes)),
  metadata: optional(MachineMetadataInput)
})
export type UpdateMachinePool = typeof UpdateMachinePool.Type

export const CheckConnection = Schema.Struct({
  provider: MachineProvider,
  provider_auth_secret_id: SecretId,
  provider_config: optional(ProviderObject),
  default_machine_provider_options: optional(ProviderObject)
})
export type CheckConnection = typeof CheckConnection.Type

export const ConnectionChecked = Schema.Struct({
  ok: Schema.Literal(true),
  provider: MachineProvider,
  details: Schema.String
}).annotate({ identifier: "MachinePoolConnectionChecked" })
export type ConnectionChecked = typeof ConnectionChecked.Type

export class MachinePoolGrant extends Schema.Class<MachinePoolGrant>("MachinePoolGrant")({
  id: MachinePoolGrantId,
  org_id: OrgId,
  machine_pool_id: MachinePoolId,
  target_project_id: ProjectId,
  created_at: Timestamp
}) {}

/** The settings a create body makes, defaults applied. */
export const settingsOf = (input: CreateMachinePool): PoolSettings => ({
  name: input.name,
  description: input.description ?? null,
  provider: input.provider,
  provider_auth_secret_id: input.provider_auth_secret_id,
  provider_config: input.provider_config ?? {},
  default_machine_cpu: input.default_machine_cpu ?? null,
  default_machine_memory_mb: input.default_machine_memory_mb ?? null,
  default_machine_env: input.default_machine_env ?? {},
  default_machine_secret_env: input.default_machine_secret_env ?? {},
  default_machine_provider_options: input.default_machine_provider_options,
  default_cwd: input.default_cwd ?? null,
  runtime_protection_enabled: input.runtime_protection_enabled ?? false,
  max_total_machines: input.max_total_machines,
  max_total_cpu: input.max_total_cpu ?? null,
  max_total_memory_mb: input.max_total_memory_mb ?? null,
  min_machine_cpu: input.min_machine_cpu ?? null,
  min_machine_memory_mb: input.min_machine_memory_mb ?? null,
  max_machine_cpu: input.max_machine_cpu ?? null,
  max_machine_memory_mb: input.max_machine_memory_mb ?? null,
  delete_after_idle_minutes: input.delete_after_idle_minutes ?? null,
  metadata: input.metadata ?? {}
})

/** The settings after a PATCH: each field present replaces the current one. */
export const patchedSettings = (current: PoolSettings, patch: UpdateMachinePool): PoolSettings => {
  const next: Record<string, unknown> = {}
  for (const key of Object.keys(PoolSettingsFields) as Array<keyof PoolSettings>) {
    const patched = (patch as Record<string, unknown>)[key]
    next[key] = patched !== undefined ? patched : current[key]
  }
  return next as unknown as PoolSettings
}

// ---------------------------------------------------------------------------------------------
// What each provider requires and refuses

const CPU_FIELDS = ["default_machine_cpu", "max_total_cpu", "min_machine_cpu", "max_machine_cpu"] as const

interface ProviderRules {
  /** Size fields the provider needs to enforce its limits. */
  readonly required: ReadonlyArray<keyof PoolSettings>
  /** Size fields the provider cannot enforce, with why. */
  readonly refused: ReadonlyArray<keyof PoolSettings>
  readonly refusedBecause: string
  /** Problems with `provider_config` and `default_machine_provider_options`, paths relative to the body. */
  readonly objectProblems: (config: ProviderObject, options: ProviderObject) => Array<Issue>
}

const unknownKeys = (object: ProviderObject, allowed: ReadonlyArray<string>, at: string): Array<Issue> =>
  Object.keys(object).filter((key) => !allowed.includes(key)).map((key) => ({
    path: `${at}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`,
    message: allowed.length === 0
      ? "is not allowed here; this provider takes no fields here"
      : `is not allowed here; allowed fields: ${allowed.join(", ")}`
  }))

/** `provider_config.host` of a docker pool: where its Docker Engine API listens. */
export const dockerHostProblem = (host: unknown): string | undefined => {
  if (typeof host !== "string") return "must be a string: unix:///path/to/docker.sock or tcp://host:port"
  if (host.startsWith("unix://")) return host.length > "unix://".length ? undefined : "must name a socket path after unix://"
  if (host.startsWith("/")) return undefined
  if (host.startsWith("tcp://")) {
    const url = URL.canParse(host.replace(/^tcp:/, "http:")) ? new URL(host.replace(/^tcp:/, "http:")) : undefined
    if (url === undefined || url.hostname === "") return "must be tcp://host:port"
    if (url.pathname !== "/" || url.search !== "" || url.username !== "") {
      return "must be tcp://host:port, without a path, query or credentials"
    }
    return undefined
  }
  return "must be unix:///path/to/docker.sock (or an absolute socket path) or tcp://host:port"
}

export const DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock"

const PROVIDERS: Record<MachineProvider, ProviderRules> = {
  docker: {
    required: ["default_machine_cpu", "default_machine_memory_mb", "max_total_cpu", "max_total_memory_mb"],
    refused: [],
    refusedBecause: "",
    objectProblems: (config, options) => {
      const issues = [
        ...unknownKeys(config, ["host"], "/provider_config"),
        ...unknownKeys(options, ["image"], "/default_machine_provider_options")
      ]
      if (config.host !== undefined) {
        const problem = dockerHostProblem(config.host)
        if (problem !== undefined) issues.push({ path: "/provider_config/host", message: problem })
      }
      if (options.image === undefined) {
        issues.push({ path: "/default_machine_provider_options/image", message: "is required: the image machines start from" })
      } else if (typeof options.image !== "string" || options.image.trim() === "") {
        issues.push({ path: "/default_machine_provider_options/image", message: "must be a non-empty image reference such as node:22" })
      }
      return issues
    }
  },
  local: {
    required: [],
    refused: CPU_FIELDS,
    refusedBecause: "the local provider cannot enforce CPU limits on its processes; leave it out",
    objectProblems: (config, options) => [
      ...unknownKeys(config, [], "/provider_config"),
      ...unknownKeys(options, [], "/default_machine_provider_options")
    ]
  }
}

/** The docker host a pool's config names, the default socket when it names none. */
export const dockerHostOf = (config: ProviderObject): string =>
  typeof config.host === "string" ? config.host : DEFAULT_DOCKER_HOST

/** The problems with `provider_config` and `default_machine_provider_options` for `provider`. */
export const providerObjectProblems = (provider: MachineProvider, config: ProviderObject, options: ProviderObject) =>
  PROVIDERS[provider].objectProblems(config, options)

/**
 * Every problem with a pool's settings: the fields its provider requires or refuses, the
 * provider's objects, and the sizes against each other (min ≤ default ≤ max ≤ total).
 */
export const settingsProblems = (settings: PoolSettings): Array<Issue> => {
  const rules = PROVIDERS[settings.provider]
  const issues: Array<Issue> = []
  for (const field of rules.required) {
    if (settings[field] === null) {
      issues.push({ path: `/${field}`, message: `is required for ${settings.provider} pools` })
    }
  }
  for (const field of rules.refused) {
    if (settings[field] !== null) {
      issues.push({ path: `/${field}`, message: `is not allowed for ${settings.provider} pools: ${rules.refusedBecause}` })
    }
  }
  issues.push(...rules.objectProblems(settings.provider_config, settings.default_machine_provider_options))
  for (const [unit, label] of [["cpu", "CPUs"], ["memory_mb", "MB"]] as const) {
    const min = settings[`min_machine_${unit}`]
    const max = settings[`max_machine_${unit}`]
    const def = settings[`default_machine_${unit}`]
    const total = settings[`max_total_${unit}`]
    if (min !== null && max !== null && min > max) {
      issues.push({ path: `/min_machine_${unit}`, message: `must be at most max_machine_${unit} (${max} ${label})` })
    }
    if (def !== null && min !== null && def < min) {
      issues.push({ path: `/default_machine_${unit}`, message: `must be at least min_machine_${unit} (${min} ${label})` })
    }
    if (def !== null && max !== null && def > max) {
      issues.push({ path: `/default_machine_${unit}`, message: `must be at most max_machine_${unit} (${max} ${label})` })
    }
    if (def !== null && total !== null && def > total) {
      issues.push({ path: `/default_machine_${unit}`, message: `must be at most max_total_${unit} (${total} ${label})` })
    }
    if (max !== null && total !== null && max > total) {
      issues.push({ path: `/max_machine_${unit}`, message: `must be at most max_total_${unit} (${total} ${label})` })
    }
  }
  return issues
}

// ---------------------------------------------------------------------------------------------
// Cluster pools: declared by the operator in AGENT_PLATFORM_CLUSTER_POOLS_FILE

/** One pool of the operator's file: a create body and the organization it belongs to. */
export const ClusterPoolEntry = Schema.Struct({ org_id: OrgId, ...CreateMachinePool.fields })
export type ClusterPoolEntry = typeof ClusterPoolEntry.Type

/** The operator's file: `{ "pools": [ ... ] }`; (org_id, name) names each pool once. */
export const ClusterPoolsFile = Schema.Struct({ pools: Schema.Array(ClusterPoolEntry) })
export type ClusterPoolsFile = typeof ClusterPoolsFile.Type
