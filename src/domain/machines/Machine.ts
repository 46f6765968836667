/**
 * A machine (MachineDescriptor): a computer a daemon registered, or one a machine pool
 * started (the same kind of machine).
 */
import { Schema } from "effect"
import { MachineId } from "../shared/Ids.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { MachineMetadata } from "./MachineMetadata.ts"

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
