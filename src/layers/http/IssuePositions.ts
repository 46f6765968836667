/**
 * Where in a JSON body each of its issues is: the 1-based `line` and `column` (in characters) that
 * the contract's issues carry for a submitted document, added to the issues of a body that does
 * not match its route. Found on that rare path only, by parsing the text again with jsonc-parser,
 * which keeps the offsets JSON.parse does not: a property present points at its name, an array
 * element at its first character, a field that is missing at the object that lacks it (the
 * deepest part of its path that is there).
 */
import { type Node, parseTree } from "jsonc-parser"
import { type Issue, InvalidRequest } from "../../domain/shared/Errors.ts"

const segmentsOf = (pointer: string): ReadonlyArray<string> =>
  pointer === "" ? [] : pointer.slice(1).split("/").map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"))

/** The offset the issue at `pointer` points at: the deepest node of its path that the document has. */
const offsetOf = (root: Node, pointer: string): number => {
  let node = root
  let offset = root.offset
  for (const segment of segmentsOf(pointer)) {
    if (node.type === "object") {
      const property = node.children?.find((child) => child.children?.[0]?.value === segment)
      if (property === undefined) break
      offset = property.offset
      const value = property.children?.[1]
      if (value === undefined) break
      node = value
    } else if (node.type === "array" && /^\d+$/.test(segment)) {
      const element = node.children?.[Number(segment)]
      if (element === undefined) break
      node = element
      offset = element.offset
    } else {
      break
    }
  }
  return offset
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff

/**
 * The 1-based line and column (counted in characters: a surrogate pair is one) of each of
 * `offsets` in `text`, in one pass over the text up to the last of them, allocating nothing per
 * character: a body of 28 MB on one line is read once, not once for each of its issues.
 */
const linesAndColumns = (text: string, offsets: ReadonlyArray<number>): Array<{ line: number; column: number }> => {
  const positions: Array<{ line: number; column: number }> = new Array(offsets.length)
  const inTextOrder = offsets.map((_, index) => index).sort((a, b) => offsets[a] - offsets[b])
  let line = 1
  let column = 1
  let at = 0
  for (const index of inTextOrder) {
    for (const offset = offsets[index]; at < offset; at++) {
      const unit = text.charCodeAt(at)
      if (unit === 0x0a) {
        line++
        column = 1
      } else if (!(isLowSurrogate(unit) && at > 0 && isHighSurrogate(text.charCodeAt(at - 1)))) {
        column++
      }
    }
    positions[index] = { line, column }
  }
  return positions
}

/** `problem` with the line and column in `text` (the body it is about) of each of its issues. */
export const withPositions = (problem: InvalidRequest | undefined, text: string | undefined): InvalidRequest | undefined => {
  if (problem?.issues === undefined || text === undefined) return problem
  const root = parseTree(text)
  if (root === undefined) return problem
  const positions = linesAndColumns(text, problem.issues.map((issue) => offsetOf(root, issue.path)))
  const issues = problem.issues.map((issue, index): Issue => ({ ...issue, ...positions[index] }))
  return new InvalidRequest({ ...problem, issues })
}
