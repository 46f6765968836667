/**
 * The error model (docs/api-conventions.md).
 *
 * Every error is a tagged class for use in code (`Effect.fail(new NotFound({ error }))`,
 * `Effect.catchTag("NotFound", ...)`), and travels as `{ error, code, ...extra }` with no `_tag`:
 * each class carries a `Wire` schema (annotated with the HTTP status)
 * that endpoints declare in their errors (`error: [NotFound.Wire, …]`), so the OpenAPI document and
 * the typed client know every code an endpoint can return.
 */
import { HttpApiSchema } from "effect/http-api"
import { Formatter, Schema, SchemaTransformation } from "effect"
import { optional } from "./Optional.ts"
import { Sha256Digest } from "./Sha256Digest.ts"

export const Issue = Schema.Struct({
  path: Schema.String,
  message: Schema.String,
  line: optional(Schema.Int),
  column: optional(Schema.Int)
}).annotate({ identifier: "Issue" })
export type Issue = typeof Issue.Type

const withIssues = { issues: optional(Schema.Array(Issue)) }
const withDigest = { current_digest: optional(Sha256Digest) }
const withDetails = { details: optional(Schema.String) }

const without = (record: object, key: string) =>
  Object.fromEntries(Object.entries(record).filter(([name]) => name !== key))

/**
 * An error's fields printed as Effect 3 printed them into the `message` of a `Schema.TaggedError`
 * without a `message` field (`{ "error": "…" }`). Effect 4 leaves that `message` empty, which would
 * lose the explanation in logs, in causes and for callers that read `error.message`.
 */
export const fieldsMessage = (error: object, names: ReadonlyArray<string>): string =>
  `{ ${names.map((name) => `${JSON.stringify(name)}: ${Formatter.format(Reflect.get(error, name))}`).join(", ")} }`

/**
 * The wire form of an error class: `{ error, code, ...extra }`, decoded back into the class,
 * annotated with the HTTP status of its code. It also gives the class Effect 3's `message`
 * (`fieldsMessage`), as a getter on its prototype like Effect 3's own.
 */
const onWire = <
  Self extends Schema.Top & {
    readonly identifier: string
    readonly Encoded: { readonly _tag: string; readonly error: string }
    readonly fields: { readonly _tag: Schema.tag<string>; readonly error: Schema.String }
    readonly prototype: object
  },
  const Code extends string
>(
  self: Self,
  code: Code,
  status: number
) => {
  const { _tag, ...fields } = self.fields as Self["fields"] & Schema.Struct.Fields
  const names = Object.keys(fields)
  Object.defineProperty(self.prototype, "message", {
    get(this: object) {
      return fieldsMessage(this, names)
    },
    enumerable: false, // as the built-in Error.prototype.message
    configurable: true
  })
  const wire = Schema.Struct({ ...(fields as Omit<Self["fields"], "_tag">), code: Schema.Literal(code) })
    .annotate({ identifier: self.identifier })
  return wire.pipe(
    Schema.decodeTo(
      self,
      SchemaTransformation.transform<Self["Encoded"], typeof wire.Type>({
        // A TaggedError's identifier is its tag. The casts: TypeScript cannot spread a generic
        // struct type back into its fields (v3 wrote this with `strict: false`).
        decode: (body) => ({ ...without(body, "code"), _tag: self.identifier }) as Self["Encoded"],
        encode: (error) => ({ ...without(error, "_tag"), code }) as typeof wire.Type
      })
    ),
    HttpApiSchema.status(status)
  )
}

const plain = { error: Schema.String }

export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", { ...plain, ...withIssues }) {
  static readonly Wire = onWire(InvalidRequest, "invalid_request", 400)
}
export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", { ...plain, ...withIssues }) {
  static readonly Wire = onWire(ValidationFailed, "validation_failed", 400)
}
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", plain) {
  static readonly Wire = onWire(Unauthorized, "unauthorized", 401)
}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", plain) {
  static readonly Wire = onWire(Forbidden, "forbidden", 403)
}
export class CsrfCheckFailed extends Schema.TaggedError<CsrfCheckFailed>()("CsrfCheckFailed", plain) {
  static readonly Wire = onWire(CsrfCheckFailed, "csrf_check_failed", 403)
}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", plain) {
  static readonly Wire = onWire(NotFound, "not_found", 404)
}

/**
 * A request that lost a race with the deletion of a resource it refers to: answered as the same
 * request sent a moment later would be (docs/api-conventions.md, "A resource deleted meanwhile").
 */
export const deletedMeanwhile = () =>
  new NotFound({
    error: "A resource this request refers to was deleted while the request was handled; check that it still exists"
  })

export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", plain) {
  static readonly Wire = onWire(Conflict, "conflict", 409)
}
export class FileContentConflict extends Schema.TaggedError<FileContentConflict>()("FileContentConflict", { ...plain, ...withDigest }) {
  static readonly Wire = onWire(FileContentConflict, "file_content_conflict", 409)
}
export class FileReadOnly extends Schema.TaggedError<FileReadOnly>()("FileReadOnly", plain) {
  static readonly Wire = onWire(FileReadOnly, "file_read_only", 403)
}
export class ExpectedDigestRequired extends Schema.TaggedError<ExpectedDigestRequired>()("ExpectedDigestRequired", { ...plain, ...withDigest }) {
  static readonly Wire = onWire(ExpectedDigestRequired, "expected_digest_required", 428)
}
export class NotAFile extends Schema.TaggedError<NotAFile>()("NotAFile", plain) {
  static readonly Wire = onWire(NotAFile, "not_a_file", 400)
}
export class IdempotencyKeyConflict extends Schema.TaggedError<IdempotencyKeyConflict>()("IdempotencyKeyConflict", plain) {
  static readonly Wire = onWire(IdempotencyKeyConflict, "idempotency_key_conflict", 409)
}
export class AgentBacklogFull extends Schema.TaggedError<AgentBacklogFull>()("AgentBacklogFull", plain) {
  static readonly Wire = onWire(AgentBacklogFull, "agent_backlog_full", 429)
}
export class StateTransitionConflict extends Schema.TaggedError<StateTransitionConflict>()("StateTransitionConflict", plain) {
  static readonly Wire = onWire(StateTransitionConflict, "state_transition_conflict", 409)
}
export class ManagedWorkAdmissionDenied extends Schema.TaggedError<ManagedWorkAdmissionDenied>()("ManagedWorkAdmissionDenied", plain) {
  static readonly Wire = onWire(ManagedWorkAdmissionDenied, "managed_work_admission_denied", 409)
}
export class PendingWork extends Schema.TaggedError<PendingWork>()("PendingWork", plain) {
  static readonly Wire = onWire(PendingWork, "pending_work", 409)
}
export class NotWakeCapable extends Schema.TaggedError<NotWakeCapable>()("NotWakeCapable", plain) {
  static readonly Wire = onWire(NotWakeCapable, "not_wake_capable", 409)
}
export class DaemonRuntimeUnregistered extends Schema.TaggedError<DaemonRuntimeUnregistered>()("DaemonRuntimeUnregistered", plain) {
  static readonly Wire = onWire(DaemonRuntimeUnregistered, "daemon_runtime_unregistered", 409)
}
/** A request body that stopped arriving: `invalid_request` (the contract's code), status 408. */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()("RequestTimeout", plain) {
  static readonly Wire = onWire(RequestTimeout, "invalid_request", 408)
}
export class Gone extends Schema.TaggedError<Gone>()("Gone", plain) {
  static readonly Wire = onWire(Gone, "gone", 410)
}
export class RequestTooLarge extends Schema.TaggedError<RequestTooLarge>()("RequestTooLarge", plain) {
  static readonly Wire = onWire(RequestTooLarge, "request_too_large", 413)
}
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", plain) {
  static readonly Wire = onWire(UnsupportedMediaType, "unsupported_media_type", 415)
}
export class Unprocessable extends Schema.TaggedError<Unprocessable>()("Unprocessable", { ...plain, ...withDetails }) {
  static readonly Wire = onWire(Unprocessable, "unprocessable", 422)
}
export class UpstreamUnavailable extends Schema.TaggedError<UpstreamUnavailable>()("UpstreamUnavailable", plain) {
  static readonly Wire = onWire(UpstreamUnavailable, "upstream_unavailable", 424)
}
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", plain) {
  static readonly Wire = onWire(RateLimited, "rate_limited", 429)
}
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", plain) {
  static readonly Wire = onWire(InternalError, "internal_error", 500)
}
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", plain) {
  static readonly Wire = onWire(ServiceUnavailable, "service_unavailable", 503)
}
export class AuthenticationUnavailable extends Schema.TaggedError<AuthenticationUnavailable>()("AuthenticationUnavailable", plain) {
  static readonly Wire = onWire(AuthenticationUnavailable, "authentication_unavailable", 503)
}
