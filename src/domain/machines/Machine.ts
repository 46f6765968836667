/**
 * A machine (spec 2.13 MachineDescriptor): a computer a daemon registered, or one a machine pool
 * started (the same kind of machine).
 */
import { Schema } from "effect"
import { Timestamp } from "../Timestamp.ts"
import { MachineMetadata } from "./MachineMetadata.ts"

export const MachineId = Schema.String.pipe(
  Schema.pattern(/^mch_[a-z2-7]{26}$/, {
    message: () => "must be an id of the form mch_ followed by 26 characters of [a-z2-7]"
  }),
  Schema.brand("MachineId")
)
export type MachineId = typeof MachineId.Type

export class MachineDescriptor extends Schema.Class<MachineDescriptor>("MachineDescriptor")({
  id: MachineId,
  name: Schema.String,
  /** `online` while its daemon is connected, `offline` otherwise; a string so that later states decode everywhere. */
  status: Schema.String,
  created_at: Timestamp,
  updated_at: Timestamp,
  hostname: Schema.String,
  platform: Schema.String,
  architecture: Schema.String,
  daemon_version: Schema.String,
  last_seen_at: Timestamp,
  metadata: MachineMetadata
}) {}
