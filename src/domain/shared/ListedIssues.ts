/**
 * The issues a service finds, as an answer lists them (docs/api-conventions.md, "Issues"): at most
 * ten, and the error sentence says how many more there were.
 */
import { type Issue, InvalidRequest } from "./Errors.ts"

/** At most this many issues are listed in an answer (docs/api-conventions.md, "Issues"). */
export const MAX_LISTED_ISSUES = 10

/** How many more there were than an answer lists, as its sentence says it: ` (and 290 more)`, nothing for none. */
export const andMore = (more: number) => more > 0 ? ` (and ${more} more)` : ""

/**
 * What an answer lists of `items` (issues, or what they are about): the first MAX_LISTED_ISSUES,
 * and how many more there were, as its sentence says it (`andMore`).
 */
export const listedOf = <A>(items: ReadonlyArray<A>) => {
  const listed = items.slice(0, MAX_LISTED_ISSUES)
  return { listed, more: andMore(items.length - listed.length) }
}

/**
 * An `invalid_request` for the issues a service found (one per path): `sentence`, then the first
 * MAX_LISTED_ISSUES of them, with how many more there were.
 */
export const invalidRequestWith = (sentence: string, issues: ReadonlyArray<Issue>) => {
  const { listed, more } = listedOf(issues)
  return new InvalidRequest({
    error: `${sentence}: ${listed.map((issue) => `${issue.path} ${issue.message}`).join("; ")}${more}`,
    issues: listed
  })
}
