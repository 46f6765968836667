/**
 * Calls a model through the adapter of its wire format (docs/model-adapters.md): `respond` sends a
 * streaming request, hands the normalized ModelEvents to its observer as they arrive (those of one
 * read of the network together) and folds them into a ModelResponse; `generate` sends a
 * non-streaming request. Opening a call is retried with exponential backoff, honouring
 * `retry-after`, on 408/409/429/5xx and connection errors; after the last attempt, or on any
 * other status, it fails with ModelProviderError carrying the provider's message. Interrupting a
 * call aborts its HTTP request.
 *
 * A call is bounded (docs/model-adapters.md, "Bounds"): the bytes it reads
 * (MAX_MODEL_RESPONSE_BYTES), the answer it folds and what the adapter holds of it as it comes
 * (MAX_MODEL_ANSWER_BYTES and MAX_TOOL_CALLS_PER_ANSWER, counted after each read: AnswerSize.ts),
 * the error body it reads (MAX_ERROR_BODY_BYTES) and the message it keeps
 * (MAX_ERROR_MESSAGE_CHARACTERS); the wait for an answer's head, each pause of its body and the
 * whole call (AppConfig's model timeouts). A stream is read up to its final event, no further.
 *
 * Everything the provider sends back (error bodies, response bodies, stream events) has the
 * call's secret values (its API key) redacted before it is decoded, so no error, output or log
 * line made from it can carry them (services/shared/SecretRedaction.ts).
 *
 * The response and the error are text from outside: each NUL and unpaired surrogate in them (in
 * the output's text, reasoning, tool names and inputs; in the provider's message, or what cutting
 * it short left of a pair) is replaced by U+FFFD before they are returned (StorableJson.ts), so
 * a turn can store what its model said. The live deltas handed to `observe` are not stored and
 * are left as they came: a pair may be cut between two of them.
 */
import { Clock, Context, Duration, Effect, Layer, Option, Redacted, Schedule, type Scope } from "effect"
import type { ApiFormat } from "../../../domain/configuration/ModelProviderConfigs.ts"
import { storableText } from "../../../domain/shared/StorableText.ts"
import { AppConfig } from "../../../layers/AppConfig.ts"
import { AnthropicMessages } from "./AnthropicMessages.ts"
import type { AnswerSize } from "./AnswerSize.ts"
import {
  cutMessage,
  describeBytes,
  describeMillis,
  MAX_ERROR_BODY_BYTES,
  MAX_MODEL_ANSWER_BYTES,
  MAX_MODEL_RESPONSE_BYTES,
  MAX_TOOL_CALLS_PER_ANSWER
} from "./ModelCallLimits.ts"
import type { ModelEvent, ModelRequest, ModelResponse } from "./ModelMessages.ts"
import { ModelProviderError, ResponseFold } from "./ModelMessages.ts"
import { makeModelStreamDecoder } from "./ModelStreamDecoding.ts"
import { OpenAiChatCompletions } from "./OpenAiChatCompletions.ts"
import { OpenAiResponses } from "./OpenAiResponses.ts"
import { errorMessage } from "./ProviderJson.ts"
import { ExchangeFailed, makeProviderHttp, type ProviderResponse, STOP_READING } from "./ProviderHttp.ts"
import { NetworkPolicy } from "../../shared/NetworkPolicy.ts"
import { secretRedactor } from "../../shared/SecretRedaction.ts"
import { storableJson } from "../../shared/StorableJson.ts"
import type { WireAdapter } from "./WireAdapter.ts"

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number
  /** The wait before the second attempt; doubled before each further one. */
  readonly initialDelay: Duration.Duration
  readonly maxDelay: Duration.Duration
  /** A `retry-after` longer than this is not waited for: the backoff applies instead. */
  readonly maxRetryAfter: Duration.Duration
}

/** The retry policy of model calls (tests shorten the delays). */
export const ModelRetryPolicy = Context.Reference<RetryPolicy>("ModelRetryPolicy", {
  defaultValue: (): RetryPolicy => ({
    maxAttempts: 4,
    initialDelay: Duration.millis(500),
    maxDelay: Duration.seconds(8),
    maxRetryAfter: Duration.seconds(60)
  })
})

const adapters: Record<ApiFormat, WireAdapter> = {
  "openai-responses": OpenAiResponses,
  "openai-chat-completions": OpenAiChatCompletions,
  "anthropic-messages": AnthropicMessages
}

/** A failed attempt: the error to report, and whether (and when) another attempt may follow. */
interface AttemptFailure {
  readonly error: ModelProviderError
  readonly retryable: boolean
  readonly retryAfter: Option.Option<Duration.Duration>
}

const retryableStatus = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500

/** `retry-after-ms`, else `retry-after` in seconds or as an HTTP date (from `now`). */
const retryAfterOf = (headers: Readonly<Record<string, string | undefined>>, now: number): Option.Option<Duration.Duration> => {
  const millis = Number(headers["retry-after-ms"])
  if (headers["retry-after-ms"] !== undefined && Number.isFinite(millis) && millis >= 0) {
    return Option.some(Duration.millis(millis))
  }
  const value = headers["retry-after"]
  if (value === undefined) return Option.none()
  const seconds = Number(value)
  if (value.trim() !== "" && Number.isFinite(seconds) && seconds >= 0) return Option.some(Duration.seconds(seconds))
  const date = Date.parse(value)
  return Number.isNaN(date) ? Option.none() : Option.some(Duration.millis(Math.max(0, date - now)))
}

type Redact = (text: string) => string

/** The redaction of the secret values a request uses: its API key. */
const redactorOf = (request: ModelRequest): Redact =>
  secretRedactor([{ id: request.apiKeySecretId, value: request.apiKey }])

/**
 * The error with its message redacted (a last guard: provider text is redacted before it is
 * decoded), cut to MAX_ERROR_MESSAGE_CHARACTERS (after the redaction: no cut can leave part of a
 * key) and storable.
 */
const redactError = (redact: Redact) => (error: ModelProviderError) =>
  new ModelProviderError({ ...error, message: storableText(cutMessage(redact(error.message))) })

/** The provider as failures name it: its base URL's host. */
const providerOf = (request: ModelRequest) => {
  try {
    return `The model provider at ${new URL(request.baseUrl).host}`
  } catch {
    return "The model provider"
  }
}

const stalledMessage = (request: ModelRequest, timeouts: Timeouts) =>
  `${providerOf(request)} sent nothing for ${describeMillis(timeouts.idleMillis)} in the middle of its answer ` +
  "(AGENT_PLATFORM_MODEL_IDLE_TIMEOUT_SECONDS); the connection was closed"

/** The model calls' timeouts, in milliseconds. */
interface Timeouts {
  readonly headMillis: number
  readonly idleMillis: number
  readonly callMillis: number
}

const connectionFailure = (request: ModelRequest, timeouts: Timeouts) => (cause: ExchangeFailed): AttemptFailure => ({
  error: new ModelProviderError({
    status: null,
    message: cause.timeout === "head"
      ? `${providerOf(request)} sent no answer within ${describeMillis(timeouts.headMillis)} ` +
        "(AGENT_PLATFORM_MODEL_HEAD_TIMEOUT_SECONDS); the connection was closed"
      : cause.timeout === "idle"
      ? stalledMessage(request, timeouts)
      : `Could not reach the model provider: ${cause.message}`
  }),
  // A body that stalled after its head is not tried again (the provider accepted the call).
  retryable: cause.timeout !== "idle",
  retryAfter: Option.none()
})

/**
 * A failed attempt from its status: the provider's message read from the first
 * MAX_ERROR_BODY_BYTES of the body, for at most the idle timeout in all (an error body is small
 * and comes with its head), the connection then left (or closed).
 */
const statusFailure = (response: ProviderResponse, redact: Redact, timeouts: Timeouts) =>
  Effect.gen(function*() {
    // Undefined when the body did not come in time (by the idle timeout or this bound).
    const body = yield* response.text(MAX_ERROR_BODY_BYTES).pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(timeouts.idleMillis),
        orElse: () => Effect.fail(new ExchangeFailed({ message: "the body did not come", timeout: "idle" }))
      }),
      Effect.catch((failed) => Effect.succeed(failed.timeout === "idle" ? undefined : { text: "", cut: false }))
    )
    yield* response.close
    const text = redact(body?.text ?? "")
    const now = yield* Clock.currentTimeMillis
    const answered = `The model provider answered HTTP ${response.status}`
    const failure: AttemptFailure = {
      error: new ModelProviderError({
        status: response.status,
        message: body === undefined
          ? `${answered}, and its body did not come within ${describeMillis(timeouts.idleMillis)}`
          : (body.cut ? undefined : errorMessage(text)) ??
            (text.trim() === ""
              ? answered
              : cutMessage(text, body.cut ? `the body, longer than ${describeBytes(MAX_ERROR_BODY_BYTES)}, was not read whole` : undefined))
      }),
      retryable: retryableStatus(response.status),
      retryAfter: retryAfterOf(response.headers, now)
    }
    return failure
  })

/**
 * When to try a failed attempt again: only a retryable failure, at most `maxAttempts` in all,
 * after its `retry-after` when it gives one no longer than `maxRetryAfter` (and no shorter than
 * `initialDelay`: a provider saying 0 does not make the attempts follow each other at once), else
 * after the exponential backoff from `initialDelay` (doubling, at most `maxDelay`).
 */
const retrySchedule = (policy: RetryPolicy) =>
  Schedule.exponential(policy.initialDelay, 2).pipe(
    Schedule.setInputType<AttemptFailure>(),
    Schedule.while(({ attempt, input }) => input.retryable && attempt <= policy.maxAttempts - 1),
    Schedule.modifyDelay(({ duration, input }) =>
      Effect.succeed(Option.getOrElse(
        Option.map(
          Option.filter(input.retryAfter, Duration.isLessThanOrEqualTo(policy.maxRetryAfter)),
          (retryAfter) => Duration.max(retryAfter, policy.initialDelay)
        ),
        () => Duration.min(duration, policy.maxDelay)
      )))
  )

/** Runs `attempt` until it succeeds, fails for good, or the policy's attempts are spent. */
const withRetries = <A, R>(attempt: Effect.Effect<A, AttemptFailure, R>): Effect.Effect<A, ModelProviderError, R> =>
  Effect.flatMap(ModelRetryPolicy, (policy) =>
    attempt.pipe(
      Effect.retry(retrySchedule(policy)),
      Effect.mapError((failure) => failure.error)
    ))

/** What Node's HTTP client refuses in a header's value (its `checkInvalidHeaderChar`). */
const NOT_A_HEADER_CHARACTER = /[^\t\x20-\x7e\x80-\xff]/

const joinUrl = (baseUrl: string, path: string) => `${baseUrl.replace(/\/+$/, "")}${path}`

const make = Effect.gen(function*() {
  const policy = yield* NetworkPolicy
  const config = yield* AppConfig
  const timeouts: Timeouts = {
    headMillis: Duration.toMillis(config.modelHeadTimeout),
    idleMillis: Duration.toMillis(config.modelIdleTimeout),
    callMillis: Duration.toMillis(config.modelCallTimeout)
  }
  // Connections are kept open between calls (no TCP connect, nor TLS handshake, per model call);
  // when private targets are blocked, they check what the host resolves to as they connect.
  const provider = yield* makeProviderHttp(policy.lookup, timeouts)

  /** The failures of a call's bounds. */
  const tooLarge = (request: ModelRequest) => () =>
    new ModelProviderError({
      status: null,
      message: `${providerOf(request)} sent more than ${describeBytes(MAX_MODEL_RESPONSE_BYTES)} for one answer; ` +
        "the platform stopped reading it and closed the connection"
    })
  /** The failure of an answer past its bounds (AnswerSize.ts), if it passed one. */
  const answerPastBounds = (request: ModelRequest, size: AnswerSize) => {
    const passed = size.passed()
    if (passed === undefined) return undefined
    const what = passed === "bytes"
      ? `an answer larger than ${describeBytes(MAX_MODEL_ANSWER_BYTES)} (its text, reasoning and tool calls together)`
      : `an answer of more than ${MAX_TOOL_CALLS_PER_ANSWER} tool calls (the most one answer may make)`
    return new ModelProviderError({
      status: null,
      message: `${providerOf(request)} sent ${what}; the platform stopped reading it and closed the connection`
    })
  }
  const stalled = (request: ModelRequest) => new ModelProviderError({ status: null, message: stalledMessage(request, timeouts) })
  const tooLong = (request: ModelRequest) =>
    new ModelProviderError({
      status: null,
      message: `${providerOf(request)} took more than ${describeMillis(timeouts.callMillis)} to answer ` +
        "(AGENT_PLATFORM_MODEL_CALL_TIMEOUT_SECONDS); the connection was closed"
    })

  /** The call, stopped (its connection closed) after the call timeout. */
  const bounded = <A>(request: ModelRequest, call: Effect.Effect<A, ModelProviderError>) =>
    Effect.timeoutOrElse(call, {
      duration: Duration.millis(timeouts.callMillis),
      orElse: () => Effect.fail(tooLong(request))
    })

  /** Before the first attempt: the base URL's host must not be (or resolve to) a refused private address. */
  const checkTarget = (request: ModelRequest) =>
    policy.checkTarget(request.baseUrl).pipe(
      Effect.mapError((refused) =>
        new ModelProviderError({
          status: null,
          message: `The model provider was not called: ${refused.message}`,
          notCalled: true
        })
      )
    )

  /**
   * Before the first attempt: the API key must fit in an HTTP header (Node refuses a line break
   * or another control character there, and a character above U+00FF), else no call is made.
   */
  const checkApiKey = (request: ModelRequest): Effect.Effect<void, ModelProviderError> =>
    NOT_A_HEADER_CHARACTER.test(Redacted.value(request.apiKey))
      ? Effect.fail(
        new ModelProviderError({
          status: null,
          message: "The model provider was not called: its API key " +
            `(secret ${request.apiKeySecretId ?? "of the provider config"}) holds a character an HTTP header cannot ` +
            "carry (a line break, another control character, or one above U+00FF); rotate the secret with the key alone",
          notCalled: true
        })
      )
      : Effect.void

  /** What is checked before a call's first attempt: its target, then its API key. */
  const checkCall = (request: ModelRequest) => Effect.andThen(checkTarget(request), checkApiKey(request))

  /** One attempt at opening a call: the response once its status is a success, for the life of the scope. */
  const open = (
    adapter: WireAdapter,
    request: ModelRequest,
    stream: boolean,
    redact: Redact
  ): Effect.Effect<ProviderResponse, AttemptFailure, Scope.Scope> =>
    provider.postJson(
      joinUrl(request.baseUrl, adapter.path),
      { ...adapter.headers(request), accept: stream ? "text/event-stream" : "application/json" },
      adapter.body(request, stream)
    ).pipe(
      Effect.mapError(connectionFailure(request, timeouts)),
      Effect.flatMap((response) =>
        response.status >= 200 && response.status < 300
          ? Effect.succeed(response)
          : Effect.flatMap(statusFailure(response, redact, timeouts), Effect.fail)
      )
    )

  /**
   * Makes a streamed call and reads it up to its final event, for the life of the scope, folding
   * its events into `fold` as they arrive (ModelStreamDecoding.ts), in plain code, those decoded
   * before a failure (an in-stream error event) before it fails. After each read of the network,
   * past the answer's bounds (what the fold and the adapter hold, `fold.size`) the reading stops
   * and the call fails; else `observe` gets the read's events.
   */
  const stream = (
    request: ModelRequest,
    fold: ResponseFold,
    observe: ((events: ReadonlyArray<ModelEvent>) => void) | undefined
  ): Effect.Effect<void, ModelProviderError, Scope.Scope> => {
    const redact = redactorOf(request)
    return Effect.gen(function*() {
      const adapter = adapters[request.apiFormat]
      yield* checkCall(request)
      const response = yield* withRetries(open(adapter, request, true, redact))
      const decoder = makeModelStreamDecoder(adapter.streamDecoder(fold.size), redact, tooLarge(request))
      yield* response.forEachRead((chunks) => {
        const decoded = decoder.decode(chunks)
        for (const event of decoded.events) fold.add(event)
        // Checked after every read, events or none: an adapter may hold a tool call's arguments for many reads.
        const pastBounds = answerPastBounds(request, fold.size)
        if (pastBounds !== undefined) return pastBounds
        if (decoded.events.length > 0) observe?.(decoded.events)
        if (decoded.failure !== undefined) return decoded.failure
        return decoded.complete === true ? STOP_READING : undefined
      }).pipe(
        Effect.catchTag("ExchangeFailed", (cause) =>
          Effect.fail(
            cause.timeout === "idle"
              ? stalled(request)
              : new ModelProviderError({ status: null, message: `The connection to the model provider broke: ${cause.message}` })
          ))
      )
      const incomplete = decoder.end()
      if (incomplete !== undefined) return yield* Effect.fail(incomplete)
    }).pipe(Effect.mapError(redactError(redact)))
  }

  /**
   * The streamed call folded into a response as its events arrive (at most
   * MAX_MODEL_ANSWER_BYTES); `observe` sees the events as they arrive (live output), those
   * decoded from one read of the network at once, synchronously: it must not block.
   */
  const respond = (
    request: ModelRequest,
    observe?: (events: ReadonlyArray<ModelEvent>) => void
  ): Effect.Effect<ModelResponse, ModelProviderError> =>
    Effect.suspend(() => {
      const fold = new ResponseFold()
      return bounded(request, Effect.map(Effect.scoped(stream(request, fold, observe)), () => storableJson(fold.result())))
    })

  const generate = (request: ModelRequest): Effect.Effect<ModelResponse, ModelProviderError> => {
    const redact = redactorOf(request)
    return Effect.gen(function*() {
      const adapter = adapters[request.apiFormat]
      yield* checkCall(request)
      const body = yield* withRetries(
        Effect.flatMap(
          open(adapter, request, false, redact),
          (response) => Effect.mapError(response.text(MAX_MODEL_RESPONSE_BYTES), connectionFailure(request, timeouts))
        )
      )
      if (body.cut) return yield* Effect.fail(tooLarge(request)())
      const fold = new ResponseFold()
      for (const event of yield* Effect.fromResult(adapter.decodeResponse(redact(body.text)))) fold.add(event)
      const pastBounds = answerPastBounds(request, fold.size)
      if (pastBounds !== undefined) return yield* Effect.fail(pastBounds)
      return storableJson(fold.result())
    }).pipe(Effect.scoped, Effect.mapError(redactError(redact)), (call) => bounded(request, call))
  }

  return { respond, generate } as const
})

export class ModelClient extends Context.Service<ModelClient, Effect.Success<typeof make>>()("ModelClient") {
  static readonly layer = Layer.effect(this, make).pipe(Layer.provide(NetworkPolicy.layer))
}
