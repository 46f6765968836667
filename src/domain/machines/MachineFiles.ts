/**
 * Files on a machine: the digest that guards every replacement, and the raw file operations the
 * HTTP files route needs (`GET|PUT /machines/{machineID}/files?path=`), which the daemon executes
 * (docs/daemon-protocol.md).
 */
import { Effect, Schema } from "effect"
import { NonNegativeInt } from "../shared/NonNegativeInt.ts"
import { optional } from "../shared/Optional.ts"
import { Sha256Digest } from "../shared/Sha256Digest.ts"

/** The SHA-256 of a file's bytes. */
export const FileDigest = Sha256Digest.annotate({ identifier: "FileDigest", description: "sha256: followed by the 64 hexadecimal digits of the file's SHA-256" })
export type FileDigest = typeof FileDigest.Type

/** How `content` is written: UTF-8 text as is, or any bytes in base64. */
export const FileEncoding = Schema.Literals(["utf-8", "base64"])
export type FileEncoding = typeof FileEncoding.Type

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** Whether `content` is base64 as the files route takes it: the standard alphabet, padded. */
export const isBase64 = (content: string) => BASE64.test(content)

/** The largest file the files route reads or writes whole (decoded bytes). */
export const FILE_TRANSFER_MAX_BYTES = 10 * 1024 * 1024

/** The characters of `bytes` bytes in base64 (padded). */
export const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4

/**
 * A whole file: text as `utf-8`, anything that is not valid UTF-8 text as `base64`; at most
 * FILE_TRANSFER_MAX_BYTES (as characters of text, which are never more than its bytes, or its
 * base64).
 */
export const FileContent = Schema.Struct({
  path: Schema.String,
  digest: FileDigest,
  size: NonNegativeInt,
  encoding: FileEncoding,
  content: Schema.String,
  /** The file's permission bits let nobody write it, or the daemon's user may not. */
  read_only: Schema.Boolean
}).pipe(Schema.check(Schema.makeFilter((file) => {
  const most = file.encoding === "utf-8" ? FILE_TRANSFER_MAX_BYTES : base64Length(FILE_TRANSFER_MAX_BYTES)
  return file.content.length <= most ||
    `the content has ${file.content.length} characters of ${file.encoding}; a file read whole is at most ${FILE_TRANSFER_MAX_BYTES} bytes (${most} characters)`
}))).annotate({ identifier: "FileContent" })
export type FileContent = typeof FileContent.Type

/** Reads a whole file (at most FILE_TRANSFER_MAX_BYTES). */
export const FileReadOperation = Schema.Struct({
  operation: Schema.Literal("file.read"),
  path: Schema.String
})

/**
 * Creates or replaces a whole file. Replacing an existing file requires `expected_digest`, the
 * digest the caller last read; a file that changed since is a `file_content_conflict`.
 */
export const FileWriteOperation = Schema.Struct({
  operation: Schema.Literal("file.write"),
  path: Schema.String,
  content: Schema.String,
  encoding: FileEncoding.pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed("utf-8"))),
  expected_digest: optional(FileDigest)
})

/** The file as written. */
export const WrittenFile = Schema.Struct({
  path: Schema.String,
  digest: FileDigest,
  size: NonNegativeInt,
  /** No file existed at the path before. */
  created: Schema.Boolean
}).annotate({ identifier: "WrittenFile" })
export type WrittenFile = typeof WrittenFile.Type
