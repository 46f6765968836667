/**
 * Which part of a request failed its endpoint's schema, in the caller's words.
 *
 * HttpApiBuilder turns a decode failure into HttpApiSchemaError, naming the part, with the first
 * problem Effect found. So on this rare path that part is decoded again here, with the options
 * HttpApiBuilder decodes it with, collecting every problem (and the input of each, which is
 * never shown but tells a parameter given twice), and formatted by DecodeIssues; a body's
 * issues get their line and column in it (IssuePositions). A failure of the response is a bug,
 * not bad input.
 */
import { HttpMethod } from "effect/http"
import type { HttpApiError } from "effect/http-api"
import { Exit, Schema, type SchemaAST } from "effect"
import { InvalidRequest } from "../../domain/shared/Errors.ts"
import { decodeFailure, type RequestPart } from "./DecodeIssues.ts"
import type { GuardedRequest } from "./GuardedRequest.ts"
import { withPositions } from "./IssuePositions.ts"
import type { RouteMatch } from "./RouteTable.ts"

const problemIn = (
  schema: Schema.Top,
  options: SchemaAST.ParseOptions | undefined,
  input: unknown,
  part: RequestPart
): InvalidRequest | undefined => {
  const exit = Schema.decodeUnknownExit(schema as Schema.Codec<unknown, unknown>, { ...options, errors: "all", reportInput: true })(input)
  if (Exit.isSuccess(exit)) return undefined
  const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error
  return error === undefined ? undefined : decodeFailure(error.issue, part)
}

/**
 * The invalid_request for the part of `request` that does not match `match`'s endpoint, if the
 * failure is one of the request.
 */
export const explainDecodeFailure = (
  match: RouteMatch,
  request: GuardedRequest,
  failure: HttpApiError.HttpApiSchemaError
): InvalidRequest | undefined => {
  const { headers, method, options, params, payload, query } = match.endpoint.schemas
  const explained = (() => {
    switch (failure.kind) {
      case "Params":
        return params && problemIn(params, options.params, match.params, "path")
      case "Headers":
        return headers && problemIn(headers, options.headers, request.headers, "headers")
      case "Query":
        return query && problemIn(Schema.toCodecArrayFromSingle(query), options.query, match.searchParams, "query")
      case "Payload": {
        if (payload === undefined) return undefined
        if (!HttpMethod.hasBody(method)) {
          return problemIn(Schema.toCodecArrayFromSingle(payload), options.payload, match.searchParams, "query")
        }
        const parsed = request.body.parsed
        if (parsed?.empty === true) {
          return new InvalidRequest({
            error: "The request body is missing: send a JSON object (Content-Type: application/json)",
            issues: [{ path: "", message: "is required" }]
          })
        }
        return parsed === undefined
          ? undefined
          : withPositions(problemIn(payload, options.payload, parsed.value, "body"), request.body.receivedText)
      }
      default:
        return undefined
    }
  })()
  if (explained !== undefined || failure.kind === "Body" || failure.kind === "ResponseHeaders") return explained
  // Decoded again without a problem: what HttpApiBuilder found, in the same words.
  const part: RequestPart = failure.kind === "Params"
    ? "path"
    : failure.kind === "Headers"
    ? "headers"
    : failure.kind === "Payload" && HttpMethod.hasBody(method)
    ? "body"
    : "query"
  const found = decodeFailure(failure.cause.issue, part)
  return part === "body" ? withPositions(found, request.body.receivedText) : found
}
