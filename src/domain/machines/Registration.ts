/**
 * `POST /api/v1/machines/register`: a daemon registers its machine, or re-registers it
 * with the `machine_id` it was given before, and receives a short-lived token for the machine
 * WebSocket. Authenticated with a daemon token or a personal API key.
 */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { ResourceName } from "../shared/ResourceName.ts"
import { MachineId } from "../shared/Ids.ts"
import { MachineDescriptor } from "./Machine.ts"
import { MachineMetadataInput } from "./MachineMetadata.ts"

export const MAX_DIRECTORIES = 64
const MAX_PATH_LENGTH = 4096
const MAX_FIELD_LENGTH = 255

const Field = (description: string) =>
  Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(MAX_FIELD_LENGTH))).annotate({ description })

/** An absolute path: `/…` on POSIX systems, `C:\…` on Windows. */
export const AbsolutePath = Schema.String.pipe(
  Schema.check(Schema.isMaxLength(MAX_PATH_LENGTH)),
  Schema.check(Schema.isPattern(/^(\/|[A-Za-z]:[\\/])/u, { message: "must be an absolute path" }))
).annotate({ identifier: "AbsolutePath" })

/** A semantic version, such as 1.4.0 or 2.0.0-rc.1. */
export const SemanticVersion = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/u, {
    message: "must be a semantic version such as 1.4.0"
  }))
)

/**
 * (machine_name) The description of a property lives on its key, and the OpenAPI document
 * describes the encoded side, so it is given on the encoded side of the name.
 */
export const RegisterMachineRequest = Schema.Struct({
  machine_name: Schema.toEncoded(ResourceName).annotateKey({
    description: "Friendly name, unique among the owner's machines"
  }).pipe(Schema.decodeTo(ResourceName)),
  hostname: Field("Host name of the machine"),
  platform: Field("Operating system, e.g. linux, darwin"),
  architecture: Field("CPU architecture, e.g. x86_64, arm64"),
  daemon_version: SemanticVersion,
  machine_id: optional(Schema.NullOr(MachineId), {
    description: "The id a previous registration gave, to register the same machine again"
  }),
  directories: optional(Schema.Array(AbsolutePath).pipe(Schema.check(Schema.isMaxLength(MAX_DIRECTORIES))), {
    description: "Absolute paths the daemon may touch; every file a tool reads or writes lies inside one"
  }),
  metadata: optional(MachineMetadataInput)
}).annotate({ identifier: "RegisterMachineRequest" })
export type RegisterMachineRequest = typeof RegisterMachineRequest.Type

export const RegisterMachineResponse = Schema.Struct({
  machine: MachineDescriptor,
  machine_token: Schema.String,
  machine_token_expires_in: Schema.Number.pipe(Schema.check(Schema.isInt()), Schema.check(Schema.isGreaterThan(0))),
  machine_ws_path: Schema.String
}).annotate({ identifier: "RegisterMachineResponse" })
export type RegisterMachineResponse = typeof RegisterMachineResponse.Type
