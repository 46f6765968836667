/**
 * The machines routes (`/orgs/{orgID}/machines`): the list filter, the update body, the grants,
 * and the files route's query and body. A machine is the MachineDescriptor (Machine.ts).
 */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { MachineGrantId, MachineId, OrgId, ProjectId } from "../shared/Ids.ts"
import { ListQuery } from "../shared/Pagination.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { describeUnstorable, unstorableCharacterOf } from "../shared/StorableText.ts"
import { Timestamp } from "../shared/Timestamp.ts"
import { FileDigest, FileEncoding, isBase64 } from "./MachineFiles.ts"
import { MachineMetadataInput } from "./MachineMetadata.ts"

/** The statuses a machine shows (MachineDescriptor's `status`); the last four are a pool machine's (docs/machine-pools.md). */
export const MachineStatus = Schema.Literals(["online", "offline", "idle", "provisioning", "deleting", "deleted"])
export type MachineStatus = typeof MachineStatus.Type

/** Without `status`, every machine but the deleted pool machines, which `?status=deleted` lists. */
export const MachineListQuery = Schema.Struct({
  ...ListQuery.fields,
  status: optional(MachineStatus)
})
export type MachineListQuery = typeof MachineListQuery.Type

export const UpdateMachine = Schema.Struct({
  name: optional(ResourceName),
  metadata: optional(MachineMetadataInput, {
    description: "Replaces the caller's pairs; observed_platform stays"
  })
})
export type UpdateMachine = typeof UpdateMachine.Type

export class MachineGrant extends Schema.Class<MachineGrant>("MachineGrant")({
  id: MachineGrantId,
  org_id: OrgId,
  machine_id: MachineId,
  target_project_id: ProjectId,
  created_at: Timestamp
}) {}

/**
 * `?path=`: an absolute path inside one of the machine's directories. A NUL (`%00`) names no file
 * on any system and cannot be stored in the request to the daemon (StorableText.ts): refused here,
 * with the rest of the query, before anything is stored or sent.
 */
export const FileQuery = Schema.Struct({
  path: Schema.String.pipe(
    Schema.check(Schema.isMinLength(1)),
    Schema.check(Schema.isMaxLength(4096)),
    Schema.check(Schema.makeFilter((path) => /^(\/|[A-Za-z]:[\\/])/.test(path) || "must be an absolute path")),
    Schema.check(Schema.makeFilter((path) => {
      const found = unstorableCharacterOf(path)
      return found === undefined || `must not contain ${describeUnstorable(found)}`
    }))
  ).annotate({ description: "An absolute path (/… or C:\\…) inside one of the machine's directories" })
})

/** A whole file to write; base64 content is checked here, so a bad one is refused at `/content` before the daemon is asked. */
export const WriteFileBody = Schema.Struct({
  content: Schema.String,
  encoding: optional(FileEncoding),
  expected_digest: optional(FileDigest)
}).pipe(Schema.check(Schema.makeFilter((body) =>
  body.encoding !== "base64" || isBase64(body.content) ||
  { path: ["content"], issue: "is not valid base64 (the standard alphabet, padded with =)" }
)))
export type WriteFileBody = typeof WriteFileBody.Type
