/**
 * Artifacts: the bytes of inline media submitted with inputs and tool results, stored once and
 * referenced from the timeline as `media_ref` blocks (docs/agents-api.md).
 *
 * `prepare` checks a submission against the size limits of the API and decodes its media without
 * storing anything; `store` then keeps the bytes and returns the blocks as they are recorded.
 */
import { Context, Effect, Layer } from "effect"
import { InvalidRequest, NotFound, RequestTooLarge } from "../../domain/shared/Errors.ts"
import { type AgentId, ArtifactId } from "../../domain/shared/Ids.ts"
import type { ContentBlock, InlineMediaBlock, SubmittedContentBlock, SubmittedTextBlock } from "../../domain/runtime/ContentBlocks.ts"
import {
  formatMiB,
  MAX_INLINE_MEDIA_BLOCKS,
  MAX_MEDIA_BLOCK_BYTES,
  MAX_MEDIA_TOTAL_BYTES,
  MAX_NON_MEDIA_BYTES
} from "../../domain/runtime/Limits.ts"
import { someOrFail } from "../shared/Failures.ts"
import { sha256 } from "../shared/Hash.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { Transactions } from "../shared/Transactions.ts"
import { ArtifactsRepository } from "./ArtifactsRepository.ts"

/** A submitted block checked against the limits, its media decoded. */
export type PreparedBlock =
  | { readonly type: "text"; readonly block: SubmittedTextBlock }
  | { readonly type: "media"; readonly block: InlineMediaBlock; readonly bytes: Buffer }

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** The decoded size of standard, padded base64, or undefined when `data` is not that. */
const decodedSize = (data: string): number | undefined => {
  if (data.length % 4 !== 0 || !BASE64.test(data)) return undefined
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0
  return (data.length / 4) * 3 - padding
}

/**
 * Checks `blocks` (the `content_blocks` of a submission at `field`) against every limit and
 * decodes their media: at most 20 media blocks (`invalid_request`), each at most 10 MiB decoded,
 * 24 MiB of media in all, 1 MiB of non-media blocks as JSON (`request_too_large`).
 */
export const prepareBlocks = (
  blocks: ReadonlyArray<SubmittedContentBlock>,
  field: string
): Effect.Effect<ReadonlyArray<PreparedBlock>, InvalidRequest | RequestTooLarge> =>
  Effect.suspend((): Effect.Effect<ReadonlyArray<PreparedBlock>, InvalidRequest | RequestTooLarge> => {
    const mediaCount = blocks.filter((block) => block.type === "media").length
    if (mediaCount > MAX_INLINE_MEDIA_BLOCKS) {
      return Effect.fail(
        new InvalidRequest({
          error: `${field} has ${mediaCount} inline media blocks; a submission may carry at most ${MAX_INLINE_MEDIA_BLOCKS}`,
          issues: [{ path: field, message: `at most ${MAX_INLINE_MEDIA_BLOCKS} inline media blocks` }]
        })
      )
    }
    let mediaTotal = 0
    let nonMediaTotal = 0
    for (const [index, block] of blocks.entries()) {
      if (block.type === "media") {
        const size = decodedSize(block.data)
        if (size === undefined) {
          return Effect.fail(
            new InvalidRequest({
              error: `${field}/${index}/data is not base64; send the bytes as standard, padded base64`,
              issues: [{ path: `${field}/${index}/data`, message: "must be standard, padded base64" }]
            })
          )
        }
        if (size > MAX_MEDIA_BLOCK_BYTES) {
          return Effect.fail(
            new RequestTooLarge({
              error: `The media block ${field}/${index} is ${size} bytes decoded; one block may be at most ${
                formatMiB(MAX_MEDIA_BLOCK_BYTES)
              }`
            })
          )
        }
        mediaTotal += size
      } else {
        nonMediaTotal += Buffer.byteLength(JSON.stringify(block), "utf8")
      }
    }
    if (mediaTotal > MAX_MEDIA_TOTAL_BYTES) {
      return Effect.fail(
        new RequestTooLarge({
          error: `The media of ${field} is ${mediaTotal} bytes decoded; a submission may carry at most ${
            formatMiB(MAX_MEDIA_TOTAL_BYTES)
          }`
        })
      )
    }
    if (nonMediaTotal > MAX_NON_MEDIA_BYTES) {
      return Effect.fail(
        new RequestTooLarge({
          error: `The non-media blocks of ${field} are ${nonMediaTotal} bytes as JSON; a submission may carry at most ${
            formatMiB(MAX_NON_MEDIA_BYTES)
          }`
        })
      )
    }
    return Effect.succeed(blocks.map((block): PreparedBlock =>
      block.type === "media"
        ? { type: "media", block, bytes: Buffer.from(block.data, "base64") }
        : { type: "text", block }
    ))
  })

const make = Effect.gen(function*() {
  const artifacts = yield* ArtifactsRepository
  const ids = yield* IdGenerator
  const { transaction } = yield* Transactions

  /** The block as recorded: text as it came, media stored and referenced as `media_ref`. */
  const storeBlock = (agentId: AgentId, prepared: PreparedBlock): Effect.Effect<ContentBlock> => {
    if (prepared.type === "text") return Effect.succeed(prepared.block)
    const { block, bytes } = prepared
    const hash = sha256(bytes)
    return Effect.gen(function*() {
      const id = yield* ids.make(ArtifactId)
      yield* artifacts.insert({ id, agent_id: agentId, media_type: block.media_type, size_bytes: bytes.length, sha256: hash, bytes })
      return {
        type: "media_ref" as const,
        artifact_id: id,
        media_type: block.media_type,
        size_bytes: bytes.length,
        sha256: hash,
        ...(block.metadata === undefined ? {} : { metadata: block.metadata })
      }
    })
  }

  /**
   * Stores the media of prepared blocks for `agentId` in the caller's transaction, without a
   * savepoint (they are rolled back with it); the blocks as recorded.
   */
  const storeInTransaction = (agentId: AgentId, blocks: ReadonlyArray<PreparedBlock>) =>
    Effect.forEach(blocks, (prepared) => storeBlock(agentId, prepared))

  /**
   * Stores the media of prepared blocks for `agentId`, in one transaction; the blocks as
   * recorded. Blocks without media store nothing and open no transaction.
   */
  const store = (agentId: AgentId, blocks: ReadonlyArray<PreparedBlock>) => {
    const stored = storeInTransaction(agentId, blocks)
    return blocks.some((prepared) => prepared.type === "media") ? transaction(stored) : stored
  }

  /** The bytes of an artifact of `agentId`. */
  const get = (agentId: AgentId, artifactId: ArtifactId) =>
    artifacts.find(agentId, artifactId).pipe(
      someOrFail(() => new NotFound({ error: `Artifact ${artifactId} not found for agent ${agentId}` }))
    )

  return { store, storeInTransaction, get } as const
})

export class Artifacts extends Context.Service<Artifacts, Effect.Success<typeof make>>()("Artifacts") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      ArtifactsRepository.layer,
      IdGenerator.layer,
      Transactions.layer
    ])
  )
}
