/**
 * The per-part limits of submissions that carry content blocks (tool results, agent inputs,
 * agent launches), checked while the body streams in, so an oversized part is refused before
 * the rest of the body is read and before anything parses it: one inline media block's `data`
 * over MAX_MEDIA_BLOCK_BYTES decoded, the media over MAX_MEDIA_TOTAL_BYTES, the non-media blocks
 * over MAX_NON_MEDIA_BYTES as compact JSON.
 *
 * A block's kind is known once its `type` is read, which may come after its `data` or `text`:
 * until then a `data` string is counted as media and a `text` string as non-media (a block that
 * holds the other kind's field is invalid anyway). Decoded sizes are a lower bound taken from
 * the base64 length, so the stream check never refuses what the exact check after parsing
 * (src/services/runtime/Artifacts.ts) accepts; that check also counts the blocks and validates
 * the base64.
 */
import { RequestTooLarge } from "../../domain/shared/Errors.ts"
import { MAX_MEDIA_BLOCK_BYTES, MAX_MEDIA_TOTAL_BYTES, MAX_NON_MEDIA_BYTES } from "../../domain/runtime/Limits.ts"
import type { JsonScanner } from "./JsonScanner.ts"
import type { ScanObserver } from "./ScanObserver.ts"

const mib = (bytes: number) => `${bytes / (1024 * 1024)} MiB`

/** The fewest bytes base64 text of `length` characters (so far) can decode to. */
const decodedAtLeast = (length: number) => Math.max(0, Math.floor((length * 3) / 4) - 2)

/** The bytes complete base64 text decodes to, given its padding. */
const decodedSize = (length: number, padding: number) => Math.max(0, Math.floor(length / 4) * 3 - padding)

export class ContentBlockBudget implements ScanObserver {
  /** Depth of the block being read; 0 outside any block. */
  private blockDepth = 0
  private blockStart = 0
  private blockPointer = ""
  private arrayPointer = ""
  private kind: "media" | "other" | undefined = undefined
  /** Decoded bytes of the block's `data` (a lower bound while it streams in). */
  private dataSize = 0
  private textSize = 0
  private mediaTotal = 0
  private nonMediaTotal = 0

  /** `paths`: where content block arrays sit in the body, as property names (`["input", "content_blocks"]`). */
  constructor(private readonly paths: ReadonlyArray<ReadonlyArray<string>>) {}

  opened(scanner: JsonScanner, isObject: boolean, canonicalStart: number) {
    if (!isObject || this.blockDepth !== 0 || !this.isBlockDepth(scanner)) return undefined
    this.blockDepth = scanner.depth
    this.blockStart = canonicalStart
    this.blockPointer = scanner.path.pointer(false)
    this.arrayPointer = scanner.path.pointerAt(scanner.depth - 1)
    this.kind = undefined
    this.dataSize = 0
    this.textSize = 0
    return undefined
  }

  stringEnded(scanner: JsonScanner, canonicalStart: number) {
    if (this.blockDepth === 0 || scanner.depth !== this.blockDepth) return undefined
    const path = scanner.path
    const size = scanner.canonicalPosition() - canonicalStart
    if (path.keyIs(this.blockDepth, "type")) this.kind = path.stringIs("media") ? "media" : "other"
    else if (path.keyIs(this.blockDepth, "data")) this.dataSize = decodedSize(size - 2, path.trailingEquals())
    else if (path.keyIs(this.blockDepth, "text")) this.textSize = size
    return this.check(this.dataSize, this.textSize, scanner.canonicalPosition() - this.blockStart)
  }

  checkpoint(scanner: JsonScanner) {
    if (this.blockDepth === 0) return undefined
    // A string still arriving counts with what has arrived of it.
    const start = scanner.openStringStart()
    let data = this.dataSize
    let text = this.textSize
    if (start >= 0 && !scanner.inKey && scanner.depth === this.blockDepth) {
      const partial = scanner.canonicalPosition() - start
      if (scanner.path.keyIs(this.blockDepth, "data")) data = decodedAtLeast(partial - 1)
      else if (scanner.path.keyIs(this.blockDepth, "text")) text = partial
    }
    return this.check(data, text, scanner.canonicalPosition() - this.blockStart)
  }

  closing(scanner: JsonScanner) {
    if (this.blockDepth === 0 || scanner.depth !== this.blockDepth) return undefined
    const blockSize = scanner.canonicalPosition() + 1 - this.blockStart // with its closing brace
    const problem = this.check(this.dataSize, this.textSize, blockSize)
    if (problem !== undefined) return problem
    if (this.kind === "media") this.mediaTotal += this.dataSize
    else if (this.kind === "other") this.nonMediaTotal += blockSize
    this.blockDepth = 0
    return undefined
  }

  /** The limits, with the current block's `data` decoded size, `text` size and size so far. */
  private check(media: number, textSize: number, blockSize: number): RequestTooLarge | undefined {
    if (this.kind !== "other") {
      if (media > MAX_MEDIA_BLOCK_BYTES) {
        return new RequestTooLarge({
          error: `The media block ${this.blockPointer} is more than ${mib(MAX_MEDIA_BLOCK_BYTES)} decoded; ` +
            `one block may be at most ${mib(MAX_MEDIA_BLOCK_BYTES)}`
        })
      }
      if (this.mediaTotal + media > MAX_MEDIA_TOTAL_BYTES) {
        return new RequestTooLarge({
          error: `The media of ${this.arrayPointer} is more than ${mib(MAX_MEDIA_TOTAL_BYTES)} decoded; ` +
            `a submission may carry at most ${mib(MAX_MEDIA_TOTAL_BYTES)}`
        })
      }
    }
    const nonMedia = this.kind === "other"
      ? blockSize
      : this.kind === undefined
      ? textSize
      : 0
    if (this.nonMediaTotal + nonMedia > MAX_NON_MEDIA_BYTES) {
      return new RequestTooLarge({
        error: `The non-media blocks of ${this.arrayPointer} are more than ${mib(MAX_NON_MEDIA_BYTES)} as JSON; ` +
          `a submission may carry at most ${mib(MAX_NON_MEDIA_BYTES)}`
      })
    }
    return undefined
  }

  /** Whether the object just opened is an element of one of the content block arrays. */
  private isBlockDepth(scanner: JsonScanner): boolean {
    const path = scanner.path
    const depth = scanner.depth
    return this.paths.some((keys) =>
      depth === keys.length + 2 && !path.isObject(depth - 1) &&
      keys.every((key, i) => path.isObject(i + 1) && path.keyIs(i + 1, key))
    )
  }
}
