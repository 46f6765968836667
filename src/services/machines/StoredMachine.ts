/**
 * A row of the `machines` table as the repository reads and writes it, and the descriptor the
 * API shows for it (MachinesRepository.ts holds the queries).
 */
import { Schema, Struct } from "effect"
import { MachineDescriptor } from "../../domain/machines/Machine.ts"
import { MachineMetadata } from "../../domain/machines/MachineMetadata.ts"
import { AgentId, MachineId, MachinePoolId, OrgId, UserId } from "../../domain/shared/Ids.ts"

/** The lifecycle of a pool machine. */
export const PoolMachineState = Schema.Literals(["provisioning", "running", "deleting", "deleted"])
export type PoolMachineState = typeof PoolMachineState.Type

/** A machine as stored. */
export const StoredMachine = Schema.Struct({
  ...Struct.omit(MachineDescriptor.fields, ["status"]),
  org_id: OrgId,
  owner_user_id: Schema.NullOr(UserId),
  machine_pool_id: Schema.NullOr(MachinePoolId),
  credential_id: Schema.String,
  directories: Schema.Array(Schema.String),
  connection_id: Schema.NullOr(Schema.String),
  operations: Schema.Array(Schema.String),
  tools: Schema.Array(Schema.String),
  online: Schema.Boolean,
  busy: Schema.Boolean,
  pool_state: Schema.NullOr(PoolMachineState),
  agent_id: Schema.NullOr(AgentId),
  cpu: Schema.NullOr(Schema.Int),
  memory_mb: Schema.NullOr(Schema.Int),
  delete_after_idle_minutes: Schema.NullOr(Schema.Int),
  provider_ref: Schema.NullOr(Schema.String),
  /** Where its provider started it (MachineProvider's `location`); null for machines from before locations were recorded. */
  provider_location: Schema.NullOr(Schema.String),
  failure: Schema.NullOr(Schema.String)
})
export type StoredMachine = typeof StoredMachine.Type

/**
 * Whether a pool machine is being deleted or deleted: stopped at its provider with its files (the
 * row stays as a record), so no daemon of it answers again.
 */
export const isPoolMachineGone = (machine: StoredMachine) => machine.pool_state === "deleting" || machine.pool_state === "deleted"

/** What the API shows: a pool machine's lifecycle first, then whether its daemon is connected (and working). */
const statusOf = (machine: StoredMachine) => {
  if (machine.pool_state !== null && machine.pool_state !== "running") return machine.pool_state
  if (!machine.online) return "offline"
  return machine.pool_state === "running" && !machine.busy ? "idle" : "online"
}

export const toDescriptor = (machine: StoredMachine): MachineDescriptor =>
  new MachineDescriptor({
    ...Struct.pick(machine, [
      "id",
      "name",
      "created_at",
      "updated_at",
      "hostname",
      "platform",
      "architecture",
      "daemon_version",
      "last_seen_at",
      "metadata"
    ]),
    status: statusOf(machine)
  })

/** What a daemon reports when it registers. */
export const Facts = Schema.Struct({
  name: Schema.String,
  hostname: Schema.String,
  platform: Schema.String,
  architecture: Schema.String,
  daemon_version: Schema.String,
  directories: Schema.Array(Schema.String),
  metadata: MachineMetadata,
  credential_id: Schema.String
})
export type MachineFacts = typeof Facts.Type

export const NewMachine = Schema.Struct({
  ...Facts.fields,
  id: MachineId,
  org_id: OrgId,
  owner_user_id: Schema.NullOr(UserId)
})

export const NewPoolMachine = Schema.Struct({
  id: MachineId,
  org_id: OrgId,
  machine_pool_id: MachinePoolId,
  agent_id: AgentId,
  name: Schema.String,
  cpu: Schema.NullOr(Schema.Int),
  memory_mb: Schema.NullOr(Schema.Int),
  delete_after_idle_minutes: Schema.NullOr(Schema.Int),
  registration_token_hash: Schema.String,
  provider_location: Schema.String
})
export type NewPoolMachine = typeof NewPoolMachine.Type
