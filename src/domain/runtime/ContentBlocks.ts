/**
 * Content blocks: what inputs, model output and tool results are made of.
 *
 * Stored and returned: `text`, `reasoning_summary` (a model's summary of its reasoning) and
 * `media_ref` (bytes kept as an artifact, downloadable from the agent's artifacts route).
 * Submitted: `text`, and inline `media` (base64 bytes) which the server stores as an artifact and
 * returns as a `media_ref`.
 */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { ArtifactId } from "../shared/Ids.ts"
import { Metadata as SubmittedMetadata } from "../shared/Metadata.ts"

/**
 * A stored block's metadata: what its submitter gave (bounded by `SubmittedMetadata`) or what the
 * server set (a provider's reasoning replay on a `reasoning_summary` block, unbounded here).
 */
const Metadata = optional(Schema.Record(Schema.String, Schema.Unknown))

export const TextBlock = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  metadata: Metadata
}).annotate({ identifier: "TextBlock" })

/** Text as a client submits it: its metadata bounded. */
export const SubmittedTextBlock = Schema.Struct({
  ...TextBlock.fields,
  metadata: optional(SubmittedMetadata)
}).annotate({ identifier: "SubmittedTextBlock" })
export type SubmittedTextBlock = typeof SubmittedTextBlock.Type

export const ReasoningSummaryBlock = Schema.Struct({
  type: Schema.Literal("reasoning_summary"),
  text: Schema.String,
  metadata: Metadata
}).annotate({ identifier: "ReasoningSummaryBlock" })

export const MediaRefBlock = Schema.Struct({
  type: Schema.Literal("media_ref"),
  artifact_id: ArtifactId,
  media_type: Schema.String,
  size_bytes: Schema.Int,
  sha256: Schema.String,
  metadata: Metadata
}).annotate({ identifier: "MediaRefBlock" })
export type MediaRefBlock = typeof MediaRefBlock.Type

/** A block as stored on the timeline and returned by the API. */
export const ContentBlock = Schema.Union([TextBlock, ReasoningSummaryBlock, MediaRefBlock]).annotate({
  identifier: "ContentBlock"
})
export type ContentBlock = typeof ContentBlock.Type

/** Inline media in a submission: base64 bytes of one media type. */
export const InlineMediaBlock = Schema.Struct({
  type: Schema.Literal("media"),
  media_type: Schema.String.pipe(
    Schema.check(Schema.isMaxLength(255)),
    Schema.check(Schema.isPattern(/^[\w.+-]+\/[\w.+-]+$/u, { message: "must be a media type such as image/png" }))
  ),
  data: Schema.String.pipe(Schema.check(Schema.isMinLength(1, { message: "must not be empty: a media block carries at least one byte" })))
    .annotate({ description: "base64 of the bytes" }),
  metadata: optional(SubmittedMetadata)
}).annotate({ identifier: "InlineMediaBlock" })
export type InlineMediaBlock = typeof InlineMediaBlock.Type

/** A block as a client submits it (inputs, tool results). */
export const SubmittedContentBlock = Schema.Union([SubmittedTextBlock, InlineMediaBlock]).annotate({
  identifier: "SubmittedContentBlock"
})
export type SubmittedContentBlock = typeof SubmittedContentBlock.Type
