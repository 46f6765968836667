/**
 * A request's JSON body, read once, when a route first asks for it, through the JsonScanner (and
 * the ContentBlockBudget where the route takes content blocks) as the bytes arrive, under the
 * route's size limit. A body the scanner refuses stops being read at once: the refusal is the
 * response, and the connection closes after it (RequestGuards).
 */
import { HttpServerError, type HttpServerRequest } from "effect/http"
import { Cause, Deferred, Effect } from "effect"
import type { IncomingMessage } from "node:http"
import type { Readable } from "node:stream"
import { formatMiB } from "../../domain/runtime/Limits.ts"
import { RequestTimeout, RequestTooLarge } from "../../domain/shared/Errors.ts"
import { ContentBlockBudget } from "./ContentBlockBudget.ts"
import { type BodyProblem, invalid } from "./BodyProblems.ts"
import { JsonScanner } from "./JsonScanner.ts"
import { continueBody } from "./ExpectContinue.ts"

export interface BodyRules {
  /** Largest body accepted, in bytes. */
  readonly limit: number
  /** Where the body holds arrays of submitted content blocks (their per-part limits apply). */
  readonly contentBlockPaths: ReadonlyArray<ReadonlyArray<string>>
}

/**
 * How long a body may stop arriving before it is answered `408` (as nginx's `client_body_timeout`:
 * between two reads, not in all, so a large body on a slow link still arrives).
 */
export const BODY_IDLE_MS = 30_000

/**
 * The read of a body whose client went away before it arrived (it closed the connection, or its
 * framing broke): interrupted as effect/http interrupts a request whose client closed its
 * connection (ClientAbort), so the request ends as one (`499` in the request log), not as a
 * server's failure (an interrupt it does not know the cause of is `503`). Nothing is sent: the
 * connection is gone.
 */
const clientGone = Effect.failCause(Cause.annotate(Cause.interrupt(), HttpServerError.ClientAbort.annotation))

/** Reads `source` to its end through the scanner: the bytes, or the first problem found. */
const readScanned = (source: Readable, rules: BodyRules) =>
  Effect.callback<Buffer, BodyProblem>((resume) => {
    const scanner = new JsonScanner(
      rules.contentBlockPaths.length > 0 ? new ContentBlockBudget(rules.contentBlockPaths) : undefined
    )
    if (source.readableEnded) {
      resume(Effect.fail(invalid("The request body was already read")))
      return
    }
    const chunks: Array<Buffer> = []
    let size = 0
    const idle = setTimeout(() =>
      refuse(
        new RequestTimeout({
          error: `The request body stopped arriving: nothing came for ${BODY_IDLE_MS / 1000} s. Send it again`
        })
      ), BODY_IDLE_MS)
    const stop = () => {
      clearTimeout(idle)
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onGone)
      source.off("aborted", onGone)
    }
    const refuse = (problem: BodyProblem) => {
      stop()
      source.pause()
      resume(Effect.fail(problem))
    }
    function onData(chunk: Buffer) {
      idle.refresh()
      size += chunk.length
      if (size > rules.limit) {
        return refuse(
          new RequestTooLarge({ error: `The request body is larger than this route accepts (${formatMiB(rules.limit)})` })
        )
      }
      const problem = scanner.write(chunk)
      if (problem !== undefined) return refuse(problem)
      chunks.push(chunk)
    }
    function onEnd() {
      stop()
      const problem = scanner.end()
      resume(problem === undefined ? Effect.succeed(Buffer.concat(chunks, size)) : Effect.fail(problem))
    }
    function onGone() {
      stop()
      resume(clientGone)
    }
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onGone)
    source.on("aborted", onGone)
    return Effect.sync(stop)
  })

export class JsonBody {
  /** The read, once begun: its outcome for every reader of the body, the first included. */
  private read: Deferred.Deferred<Buffer, HttpServerError.HttpServerError> | undefined = undefined
  private received: Buffer | undefined = undefined
  private parsedValue: ParsedBody | undefined = undefined

  private readonly request: HttpServerRequest.HttpServerRequest
  private readonly rules: BodyRules

  constructor(request: HttpServerRequest.HttpServerRequest, rules: BodyRules) {
    this.request = request
    this.rules = rules
  }

  /**
   * The bytes, read once (by the first reader, in its own fiber: no fiber is forked for it); a
   * refused body fails with an HttpServerError whose reason (a RequestParseError) has the problem
   * as its cause.
   */
  get bytes(): Effect.Effect<Buffer, HttpServerError.HttpServerError> {
    return Effect.suspend(() => {
      if (this.read !== undefined) return Deferred.await(this.read)
      const read = this.read = Deferred.makeUnsafe<Buffer, HttpServerError.HttpServerError>()
      const request = this.request
      continueBody(request.source as IncomingMessage)
      return readScanned(request.source as Readable, this.rules).pipe(
        Effect.map((bytes) => {
          this.received = bytes
          return bytes
        }),
        Effect.mapError((problem) =>
          new HttpServerError.HttpServerError({
            reason: new HttpServerError.RequestParseError({ request, description: problem.error, cause: problem })
          })
        ),
        Effect.onExit((exit) => Deferred.done(read, exit))
      )
    })
  }

  /** The body as text (what HttpApiBuilder reads and parses). */
  get text(): Effect.Effect<string, HttpServerError.HttpServerError> {
    return Effect.map(this.bytes, (bytes) => bytes.toString("utf8"))
  }

  /** The parsed body; `null` for an empty one (as effect/http reads it). */
  get json(): Effect.Effect<unknown, HttpServerError.HttpServerError> {
    return Effect.map(this.bytes, () => this.parsed!.value)
  }

  /** The body as text, once a route has read it. */
  get receivedText(): string | undefined {
    return this.received?.toString("utf8")
  }

  /** The parsed body (`null` for an empty one), once a route has read it. */
  get parsed(): ParsedBody | undefined {
    const bytes = this.received
    if (bytes === undefined) return undefined
    const empty = bytes.length === 0 || bytes.every(isWhitespace)
    // The scanner checked the syntax: JSON.parse cannot fail here.
    return this.parsedValue ??= { value: empty ? null : JSON.parse(bytes.toString("utf8")), empty }
  }
}

/** A body as parsed: `empty` tells a body that is not there from the JSON `null`, both `null` as values. */
export interface ParsedBody {
  readonly value: unknown
  readonly empty: boolean
}

const isWhitespace = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d
