/**
 * What every answer must satisfy, whatever was sent:
 * - never a 5xx, and always an answer (no reset, no hang);
 * - an error body is exactly `{error, code}` plus only `issues`, `current_digest`, `details`,
 *   `code` is one of the spec's 27 codes, and the status is that code's status; no issue says
 *   only "a valid value" (what the caller should send is unsaid);
 * - the status is one the operation declares in the OpenAPI document;
 * - another tenant naming organization A's resources gets 400 or 404 (or 413/415, which the
 *   server answers before it looks at any resource), never a 2xx and never a 403 unless the same
 *   request naming nothing gets that 403 too (an organization key on a route about the caller);
 * - a member with read access changes nothing in a project (no 2xx on a non-GET under it);
 * and, given what was sent: a body that breaks the published schema, or holds a NUL or a lone
 * surrogate, is never accepted; a malformed integer parameter is `400 invalid_request` naming
 * it; a body sent as anything but JSON is `415`; a cursor the server never made is not accepted
 * (a caller who may not list at all gets 403 first).
 */
import type { FuzzCase } from "./FuzzCases.ts"
import type { RawResponse } from "./HttpExchange.ts"
import type { Operation } from "./OpenApiDocument.ts"

/** The spec's error codes and the status of each. */
const CODE_STATUS: Readonly<Record<string, number>> = {
  invalid_request: 400,
  validation_failed: 400,
  not_a_file: 400,
  unauthorized: 401,
  forbidden: 403,
  csrf_check_failed: 403,
  file_read_only: 403,
  not_found: 404,
  conflict: 409,
  file_content_conflict: 409,
  idempotency_key_conflict: 409,
  state_transition_conflict: 409,
  managed_work_admission_denied: 409,
  pending_work: 409,
  not_wake_capable: 409,
  daemon_runtime_unregistered: 409,
  gone: 410,
  request_too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  upstream_unavailable: 424,
  expected_digest_required: 428,
  agent_backlog_full: 429,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  authentication_unavailable: 503
}

const ERROR_FIELDS = new Set(["error", "code", "issues", "current_digest", "details"])
const ISSUE_FIELDS = new Set(["path", "message", "line", "column"])

/** What another tenant may be told about organization A's resources. */
const OTHER_TENANT_STATUSES = new Set([400, 404, 413, 415])

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isSuccess = (status: number) => status >= 200 && status < 300

/** Problems with the shape of an error body. */
const errorBodyProblems = (response: RawResponse): Array<string> => {
  if (!response.contentType.includes("application/json")) {
    return [`error answer ${response.status} with content type ${JSON.stringify(response.contentType)}, not JSON`]
  }
  let body: unknown
  try {
    body = JSON.parse(response.text)
  } catch {
    return [`error answer ${response.status} whose body is not JSON`]
  }
  if (!isObject(body)) return [`error body is not an object`]
  const problems: Array<string> = []
  const extra = Object.keys(body).filter((key) => !ERROR_FIELDS.has(key))
  if (extra.length > 0) problems.push(`error body has fields beyond the wire shape: ${extra.join(", ")}`)
  if (typeof body.error !== "string" || body.error === "") problems.push("error body without an `error` text")
  if (typeof body.code !== "string") {
    problems.push("error body without a `code`")
  } else if (!(body.code in CODE_STATUS)) {
    problems.push(`code ${body.code} is not one of the spec's codes`)
  } else if (CODE_STATUS[body.code] !== response.status) {
    problems.push(`code ${body.code} answered with status ${response.status}; its status is ${CODE_STATUS[body.code]}`)
  }
  if (body.issues !== undefined) {
    const issues = body.issues
    const wellFormed = Array.isArray(issues) && issues.every((issue) =>
      isObject(issue) && Object.keys(issue).every((key) => ISSUE_FIELDS.has(key)) &&
      typeof issue.path === "string" && typeof issue.message === "string" &&
      (issue.line === undefined || Number.isInteger(issue.line)) && (issue.column === undefined || Number.isInteger(issue.column))
    )
    if (!wellFormed) problems.push(`issues are not [{path, message, line?, column?}]: ${JSON.stringify(issues).slice(0, 200)}`)
    // The decoder's last resort when it cannot say what a field takes: it tells the caller nothing to do.
    else if (issues.some((issue: { readonly message: string }) => issue.message.includes("a valid value"))) {
      problems.push(`an issue says only "a valid value", not what to send: ${JSON.stringify(issues).slice(0, 200)}`)
    }
  }
  if (body.current_digest !== undefined && !/^sha256:[0-9a-f]{64}$/.test(String(body.current_digest))) {
    problems.push("current_digest is not sha256:<64 hex>")
  }
  if (body.details !== undefined && typeof body.details !== "string") problems.push("details is not a string")
  return problems
}

const namesParameter = (response: RawResponse, name: string): boolean => {
  try {
    const body = JSON.parse(response.text) as { error?: string; issues?: ReadonlyArray<{ path?: string }> }
    return (body.issues ?? []).some((issue) => String(issue.path).includes(name)) || String(body.error).includes(name)
  } catch {
    return false
  }
}

const codeOf = (response: RawResponse): string | undefined => {
  try {
    return (JSON.parse(response.text) as { code?: string }).code
  } catch {
    return undefined
  }
}

/**
 * The properties `response` breaks. `twin` sends the same request with organization A's ids
 * replaced by ids of nothing (only needed for a 403 to another tenant).
 */
/** Operations sent as POST that change nothing: a member with read access may call them. */
const READS_BY_POST = new Set(["agents.mintStreamToken"])

export const violationsOf = async (
  operation: Operation,
  sent: FuzzCase,
  response: RawResponse,
  twin: () => Promise<RawResponse>
): Promise<Array<string>> => {
  const { status } = response
  const problems: Array<string> = []
  if (status >= 500) problems.push(`a ${status} answer`)
  if (status >= 400) problems.push(...errorBodyProblems(response))
  if (isSuccess(status) && response.contentType.includes("application/json")) {
    try {
      JSON.parse(response.text)
    } catch {
      problems.push(`a ${status} answer whose JSON body does not parse`)
    }
  }
  if (!operation.statuses.has(status)) problems.push(`status ${status} is not declared for ${operation.id}`)
  if (sent.namesTenantA && !OTHER_TENANT_STATUSES.has(status)) {
    const sameForNothing = status === 403 && (await twin()).status === 403
    if (!sameForNothing) problems.push(`another tenant got ${status} on organization A's resources (only 400 or 404 may answer)`)
  }
  const changes = operation.method !== "GET" && !READS_BY_POST.has(operation.id)
  if (sent.caller === "member" && sent.projectOfA && changes && isSuccess(status)) {
    problems.push(`a member with read access changed a project (${status})`)
  }
  const bodySent = sent.body !== undefined && !sent.notJson
  if (bodySent && sent.body!.breaksSchema === true && isSuccess(status)) {
    problems.push(`a body that breaks the published schema was accepted (${status})`)
  }
  if (bodySent && sent.body!.unstorableText && isSuccess(status)) {
    problems.push(`a body with a NUL or a lone surrogate was accepted (${status}); it cannot be stored as sent`)
  }
  if (sent.malformedInteger !== undefined) {
    if (status !== 400 || codeOf(response) !== "invalid_request") {
      problems.push(`the malformed integer in ${sent.malformedInteger} got ${status}, not 400 invalid_request`)
    } else if (!namesParameter(response, sent.malformedInteger)) {
      problems.push(`the 400 for a malformed integer does not name ${sent.malformedInteger}`)
    }
  }
  if (sent.notJson && status !== 415) problems.push(`a body sent as ${JSON.stringify(sent.request.contentType ?? "no content type")} got ${status}, not 415`)
  if (sent.unknownCursor && isSuccess(status)) problems.push(`a cursor the server never made was accepted (${status})`)
  return problems
}
