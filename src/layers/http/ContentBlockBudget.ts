/**
 * The per-part limits of submissions that carry content blocks (tool results, agent inputs,
 * agent launches), checked while the body streams in, so an oversized part is refused before
 * the rest of the body is read and before anything parses it: one inline media block's `data`
 * over MAX_MEDIA_BLOCK_BYTES decoded, the media over MAX_MEDIA_TOTAL_BYTES, the non-media blocks
 * over MAX_NON_MEDIA_BYTES as compact JSON, and the rest of the body (what is outside the arrays
 * of blocks, and the media blocks' fields other than `data`) over MAX_REST_OF_SUBMISSION_BYTES.
 * Without the last, a route's 48 MiB went to whatever the caller put there: a launch's metadata
 * of 2.6 million keys took 20 s of the server's only thread to decode and refuse.
 *
 * A block's kind is known once its `type` is read, which may come after its `data` or `text`:
 * until then a `data` string is counted as media and a `text` string as non-media (a block that
 * holds the other kind's field is invalid anyway). Decoded sizes are a lower bound taken from
 * the base64 length, so the stream check never refuses what the exact check after parsing
 * (src/services/runtime/Artifacts.ts) accepts; that check also counts the blocks and validates
 * the base64.
 *
 * Whatever else an array of blocks holds is charged as non-media, by its size as compact JSON: an
 * object that ends without a `type` (whole, its `data` too), and an element that is no object (a
 * number, a string, an array...). None of them is a valid block, so the exact check never sees
 * them, and a body of a million of them is refused here rather than decoded (and described) one
 * by one.
 */
import { RequestTooLarge } from "../../domain/shared/Errors.ts"
import {
  formatMiB,
  MAX_MEDIA_BLOCK_BYTES,
  MAX_MEDIA_TOTAL_BYTES,
  MAX_NON_MEDIA_BYTES,
  MAX_REST_OF_SUBMISSION_BYTES
} from "../../domain/runtime/Limits.ts"
import type { JsonScanner } from "./JsonScanner.ts"
import type { ScanObserver } from "./ScanObserver.ts"

/** The fewest bytes base64 text of `length` characters (so far) can decode to. */
const decodedAtLeast = (length: number) => Math.max(0, Math.floor((length * 3) / 4) - 2)

/** The bytes complete base64 text decodes to, given its padding. */
const decodedSize = (length: number, padding: number) => Math.max(0, Math.floor(length / 4) * 3 - padding)

export class ContentBlockBudget implements ScanObserver {
  /** Depth of the array of blocks being read; 0 outside any. */
  private arrayDepth = 0
  private arrayStart = 0
  private arrayPointer = ""
  /** Bytes of the array's blocks read to their end, of any kind. */
  private blockBytes = 0
  /** Bytes of the arrays of blocks read to their end, brackets included. */
  private arraysBytes = 0
  /** Depth of the block (an object in the array) being read; 0 outside any block. */
  private blockDepth = 0
  private blockStart = 0
  private blockPointer = ""
  private kind: "media" | "other" | undefined = undefined
  /** Decoded bytes of the block's `data` (a lower bound while it streams in). */
  private dataSize = 0
  /** Bytes of the block's `data` string as compact JSON, quotes included. */
  private dataChars = 0
  private textSize = 0
  private mediaTotal = 0
  /** Non-media bytes of the blocks read to their end, and of the arrays' other elements. */
  private nonMediaTotal = 0
  /** Bytes of the media blocks read to their end, besides their `data`. */
  private mediaBlocksRest = 0

  /** `paths`: where content block arrays sit in the body, as property names (`["input", "content_blocks"]`). */
  private readonly paths: ReadonlyArray<ReadonlyArray<string>>

  constructor(paths: ReadonlyArray<ReadonlyArray<string>>) {
    this.paths = paths
  }

  opened(scanner: JsonScanner, isObject: boolean, canonicalStart: number) {
    if (this.arrayDepth === 0) {
      if (!isObject && this.isBlockArray(scanner)) {
        this.arrayDepth = scanner.depth
        this.arrayStart = canonicalStart
        this.arrayPointer = scanner.path.pointerAt(scanner.depth)
        this.blockBytes = 0
      }
      return undefined
    }
    if (!isObject || scanner.depth !== this.arrayDepth + 1) return undefined
    this.blockDepth = scanner.depth
    this.blockStart = canonicalStart
    this.blockPointer = scanner.path.pointer(false)
    this.kind = undefined
    this.dataSize = 0
    this.dataChars = 0
    this.textSize = 0
    return undefined
  }

  stringEnded(scanner: JsonScanner, canonicalStart: number) {
    if (this.blockDepth === 0 || scanner.depth !== this.blockDepth) return undefined
    const path = scanner.path
    const size = scanner.canonicalPosition() - canonicalStart
    if (path.keyIs(this.blockDepth, "type")) this.kind = path.stringIs("media") ? "media" : "other"
    else if (path.keyIs(this.blockDepth, "data")) {
      this.dataSize = decodedSize(size - 2, path.trailingEquals())
      this.dataChars = size
    } else if (path.keyIs(this.blockDepth, "text")) this.textSize = size
    return this.checkBlock(scanner, this.dataSize, this.dataChars, this.textSize, scanner.canonicalPosition() - this.blockStart)
  }

  checkpoint(scanner: JsonScanner) {
    if (this.arrayDepth === 0) return this.check(0, 0, 0, scanner)
    if (this.blockDepth === 0) return this.check(0, this.otherBytes(scanner), 0, scanner)
    // A string still arriving counts with what has arrived of it.
    const start = scanner.openStringStart()
    let data = this.dataSize
    let dataChars = this.dataChars
    let text = this.textSize
    if (start >= 0 && !scanner.inKey && scanner.depth === this.blockDepth) {
      const partial = scanner.canonicalPosition() - start
      if (scanner.path.keyIs(this.blockDepth, "data")) {
        data = decodedAtLeast(partial - 1)
        dataChars = partial
      } else if (scanner.path.keyIs(this.blockDepth, "text")) text = partial
    }
    return this.checkBlock(scanner, data, dataChars, text, scanner.canonicalPosition() - this.blockStart)
  }

  closing(scanner: JsonScanner) {
    if (this.arrayDepth === 0) return undefined
    if (this.blockDepth !== 0) {
      if (scanner.depth !== this.blockDepth) return undefined
      const blockSize = scanner.canonicalPosition() + 1 - this.blockStart // with its closing brace
      // A block that ends without a type is no media block: non-media, whole, checked here.
      this.kind ??= "other"
      const problem = this.checkBlock(scanner, this.dataSize, this.dataChars, this.textSize, blockSize)
      if (problem !== undefined) return problem
      if (this.kind === "media") {
        this.mediaTotal += this.dataSize
        this.mediaBlocksRest += blockSize - this.dataChars
      } else this.nonMediaTotal += blockSize
      this.blockBytes += blockSize
      this.blockDepth = 0
      return undefined
    }
    if (scanner.depth !== this.arrayDepth) return undefined
    const others = this.otherBytes(scanner)
    const problem = this.check(0, others, 0, scanner)
    if (problem !== undefined) return problem
    this.nonMediaTotal += others
    this.arraysBytes += scanner.canonicalPosition() + 1 - this.arrayStart // with its closing bracket
    this.arrayDepth = 0
    return undefined
  }

  /**
   * Bytes of the array's elements that are not objects, read so far: all it has read but its
   * opening bracket, its commas, its blocks and the block being read.
   */
  private otherBytes(scanner: JsonScanner): number {
    const position = scanner.canonicalPosition()
    const read = position - this.arrayStart - 1
    const inBlock = this.blockDepth === 0 ? 0 : position - this.blockStart
    return read - scanner.path.indexAt(this.arrayDepth) - this.blockBytes - inBlock
  }

  /**
   * The limits, with the block being read as it is so far: its `data` decoded (media, unless the
   * block is of another type), its `text`, and its size (all of it non-media once it is known not
   * to be media; else what is neither its `data` nor its `text` is the rest of the body's).
   */
  private checkBlock(
    scanner: JsonScanner,
    data: number,
    dataChars: number,
    text: number,
    blockSize: number
  ): RequestTooLarge | undefined {
    if (this.kind === "other") return this.check(0, this.otherBytes(scanner) + blockSize, 0, scanner)
    const nonMedia = this.kind === undefined ? text : 0
    return this.check(data, this.otherBytes(scanner) + nonMedia, blockSize - dataChars - nonMedia, scanner)
  }

  /**
   * The bytes of the rest of the body read so far: outside the arrays of blocks (up to the one
   * being read), and the media blocks' fields but `data`; `inBlock` of the block being read.
   */
  private restBytes(scanner: JsonScanner, inBlock: number): number {
    const outside = (this.arrayDepth === 0 ? scanner.canonicalPosition() : this.arrayStart) - this.arraysBytes
    return outside + this.mediaBlocksRest + inBlock
  }

  /**
   * The limits, with `media` decoded bytes of the block being read, `nonMedia` bytes not yet in
   * the totals, and `rest` bytes of the block being read that are the rest of the body's.
   */
  private check(media: number, nonMedia: number, rest: number, scanner: JsonScanner): RequestTooLarge | undefined {
    if (this.restBytes(scanner, rest) > MAX_REST_OF_SUBMISSION_BYTES) {
      return new RequestTooLarge({
        error: `The request body is more than ${formatMiB(MAX_REST_OF_SUBMISSION_BYTES)} as JSON besides its content blocks ` +
          `(the media blocks' data and the other blocks, which have limits of their own); ` +
          `its other fields may take at most ${formatMiB(MAX_REST_OF_SUBMISSION_BYTES)} together`
      })
    }
    if (media > MAX_MEDIA_BLOCK_BYTES) {
      return new RequestTooLarge({
        error: `The media block ${this.blockPointer} is more than ${formatMiB(MAX_MEDIA_BLOCK_BYTES)} decoded; ` +
          `one block may be at most ${formatMiB(MAX_MEDIA_BLOCK_BYTES)}`
      })
    }
    if (this.mediaTotal + media > MAX_MEDIA_TOTAL_BYTES) {
      return new RequestTooLarge({
        error: `The media of ${this.arrayPointer} is more than ${formatMiB(MAX_MEDIA_TOTAL_BYTES)} decoded; ` +
          `a submission may carry at most ${formatMiB(MAX_MEDIA_TOTAL_BYTES)}`
      })
    }
    if (this.nonMediaTotal + nonMedia > MAX_NON_MEDIA_BYTES) {
      return new RequestTooLarge({
        error: `The non-media blocks of ${this.arrayPointer} are more than ${formatMiB(MAX_NON_MEDIA_BYTES)} as JSON; ` +
          `a submission may carry at most ${formatMiB(MAX_NON_MEDIA_BYTES)}`
      })
    }
    return undefined
  }

  /** Whether the array just opened is one of the content block arrays. */
  private isBlockArray(scanner: JsonScanner): boolean {
    const path = scanner.path
    const depth = scanner.depth
    return this.paths.some((keys) =>
      depth === keys.length + 1 && keys.every((key, i) => path.isObject(i + 1) && path.keyIs(i + 1, key))
    )
  }
}
