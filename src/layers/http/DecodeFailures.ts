/**
 * Which part of a request failed its endpoint's schema, in the caller's words.
 *
 * HttpApiBuilder turns a decode failure into HttpApiDecodeError with Effect's own formatting
 * (which quotes the value received, and prints schemas) and keeps only that text. So on this
 * rare path the request is decoded again here, in the order the builder decodes it (path, body,
 * headers, query), collecting every problem, and formatted by DecodeIssues. When every part
 * decodes, the failure came from inside a handler: a bug, not bad input.
 */
import { HttpMethod } from "@effect/platform"
import { Either, Schema } from "effect"
import { InvalidRequest } from "../../domain/shared/Errors.ts"
import { decodeFailure, type RequestPart } from "./DecodeIssues.ts"
import type { GuardedRequest } from "./GuardedRequest.ts"
import type { RouteMatch } from "./RouteTable.ts"

const problemIn = (schema: Schema.Schema.All, input: unknown, part: RequestPart): InvalidRequest | undefined => {
  const result = Schema.decodeUnknownEither(schema as Schema.Schema<unknown, unknown>, { errors: "all" })(input)
  return Either.isLeft(result) ? decodeFailure(result.left.issue, part) : undefined
}

/** The invalid_request for the part of `request` that does not match `match`'s endpoint, if any does not. */
export const explainDecodeFailure = (match: RouteMatch, request: GuardedRequest): InvalidRequest | undefined => {
  const { headersSchema, method, pathSchema, payloadSchema, urlParamsSchema } = match.endpoint.schemas
  if (pathSchema._tag === "Some") {
    const problem = problemIn(pathSchema.value, match.params, "path")
    if (problem !== undefined) return problem
  }
  if (payloadSchema._tag === "Some") {
    const takesBody = HttpMethod.hasBody(method)
    const parsed = request.body.parsed
    if (takesBody && parsed?.value === null) {
      return new InvalidRequest({
        error: "The request body is missing: send a JSON object (Content-Type: application/json)",
        issues: [{ path: "", message: "is required" }]
      })
    }
    if (!takesBody || parsed !== undefined) {
      const problem = problemIn(payloadSchema.value, takesBody ? parsed!.value : match.searchParams, takesBody ? "body" : "query")
      if (problem !== undefined) return problem
    }
  }
  if (headersSchema._tag === "Some") {
    const problem = problemIn(headersSchema.value, request.headers, "headers")
    if (problem !== undefined) return problem
  }
  if (urlParamsSchema._tag === "Some") {
    return problemIn(urlParamsSchema.value, match.searchParams, "query")
  }
  return undefined
}
