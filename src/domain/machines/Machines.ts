/**
 * The machines routes (`/orgs/{orgID}/machines`): the list filter, the update body, the grants,
 * and the files route's query and body. A machine is the MachineDescriptor (Machine.ts).
 */
import { Schema } from "effect"
import { MachineGrantId, MachineId, OrgId, ProjectId } from "../shared/Ids.ts"
import { ListQuery } from "../shared/Pagination.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { strict } from "../shared/Strict.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { FileDigest, FileEncoding } from "./MachineFiles.ts"
import { MachineMetadataInput } from "./MachineMetadata.ts"

/** The statuses a machine shows (MachineDescriptor's `status`); the last four are a pool machine's (docs/machine-pools.md). */
export const MachineStatus = Schema.Literal("online", "offline", "idle", "provisioning", "deleting", "deleted")
export type MachineStatus = typeof MachineStatus.Type

/** Without `status`, every machine but the deleted pool machines, which `?status=deleted` lists. */
export const MachineListQuery = Schema.Struct({
  ...ListQuery.fields,
  status: Schema.optional(MachineStatus)
})
export type MachineListQuery = typeof MachineListQuery.Type

export const UpdateMachine = Schema.Struct({
  name: Schema.optional(ResourceName),
  metadata: Schema.optional(MachineMetadataInput).annotations({
    description: "Replaces the caller's pairs; observed_platform stays"
  })
}).annotations(strict)
export type UpdateMachine = typeof UpdateMachine.Type

export class MachineGrant extends Schema.Class<MachineGrant>("MachineGrant")({
  id: MachineGrantId,
  org_id: OrgId,
  machine_id: MachineId,
  target_project_id: ProjectId,
  created_at: Timestamp
}) {}

/** `?path=`: an absolute path inside one of the machine's directories. */
export const FileQuery = Schema.Struct({
  path: Schema.String.pipe(
    Schema.minLength(1),
    Schema.maxLength(4096),
    Schema.filter((path) => /^(\/|[A-Za-z]:[\\/])/.test(path) || "must be an absolute path")
  ).annotations({ description: "An absolute path (/… or C:\\…) inside one of the machine's directories" })
})

export const WriteFileBody = Schema.Struct({
  content: Schema.String,
  encoding: Schema.optional(FileEncoding),
  expected_digest: Schema.optional(FileDigest)
}).annotations(strict)
export type WriteFileBody = typeof WriteFileBody.Type
