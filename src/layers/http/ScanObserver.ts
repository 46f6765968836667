/**
 * What follows a JsonScanner through the structure of a body as it streams in, to enforce limits
 * on parts of it (ContentBlockBudget). Sizes are the scanner's canonical positions (bytes as
 * compact JSON, see JsonScanner).
 */
import type { BodyProblem } from "./BodyProblems.ts"
import type { JsonScanner } from "./JsonScanner.ts"

/** Follows the structure of the body; any callback may stop the scan with a problem. */
export interface ScanObserver {
  /** A container was opened at `scanner.depth` (an object when `isObject`). */
  readonly opened: (scanner: JsonScanner, isObject: boolean, canonicalStart: number) => BodyProblem | undefined
  /** The container at `scanner.depth` is about to close. */
  readonly closing: (scanner: JsonScanner) => BodyProblem | undefined
  /** A string value (not a key) ended; its key or index is the innermost of `scanner.path`. */
  readonly stringEnded: (scanner: JsonScanner, canonicalStart: number) => BodyProblem | undefined
  /** The end of a chunk. */
  readonly checkpoint: (scanner: JsonScanner) => BodyProblem | undefined
}
