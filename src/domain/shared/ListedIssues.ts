/**
 * The issues a service finds, as an answer lists them (docs/api-conventions.md, "Issues"): at most
 * ten, and the error sentence says how many more there were.
 */
import { type Issue, InvalidRequest } from "./Errors.ts"

/** At most this many issues are listed in an answer (docs/api-conventions.md, "Issues"). */
export const MAX_LISTED_ISSUES = 10

/**
 * An `invalid_request` for the issues a service found (one per path): `sentence`, then the first
 * MAX_LISTED_ISSUES of them, with how many more there were.
 */
export const invalidRequestWith = (sentence: string, issues: ReadonlyArray<Issue>) => {
  const listed = issues.slice(0, MAX_LISTED_ISSUES)
  const more = issues.length - listed.length
  return new InvalidRequest({
    error: `${sentence}: ${listed.map((issue) => `${issue.path} ${issue.message}`).join("; ")}` +
      (more > 0 ? ` (and ${more} more)` : ""),
    issues: listed
  })
}
