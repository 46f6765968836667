/**
 * One raw HTTP exchange over node:http, for requests the typed client cannot send: any bytes as
 * the body, any content type or none, a chunked body, malformed paths and queries. An answer
 * streamed as Server-Sent Events is cut after its headers (the stream never ends by itself).
 */
import { request as httpRequest } from "node:http"

export interface RawRequest {
  readonly method: string
  /** Path and query, already encoded as they go on the wire. */
  readonly target: string
  /** Sent as `Authorization: Bearer <token>`; none when undefined. */
  readonly token?: string
  /** `undefined`: no Content-Type header; several: one Content-Type header each. */
  readonly contentType?: string | ReadonlyArray<string>
  readonly body?: string | Buffer
  /** A JavaScript expression that evaluates to the body, for reproductions of long bodies. */
  readonly bodyRecipe?: string
  /** Send the body chunked (no Content-Length). */
  readonly chunked?: boolean
  readonly headers?: Readonly<Record<string, string>>
}

export interface RawResponse {
  readonly status: number
  readonly contentType: string
  readonly text: string
}

/** The Content-Type headers of a request, one value each. */
const contentTypes = (contentType: string | ReadonlyArray<string>): Array<string> =>
  typeof contentType === "string" ? [contentType] : [...contentType]

/** How long one answer may take before the exchange counts as a hang. */
const ANSWER_TIMEOUT_MS = 20_000

/** Sends `request` to 127.0.0.1:`port`; fails when the connection breaks or no answer comes in time. */
export const exchange = (port: number, request: RawRequest): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const body = request.body === undefined ? undefined : Buffer.from(request.body)
    const headers: Record<string, string> = {
      ...(request.token === undefined ? {} : { authorization: `Bearer ${request.token}` }),
      ...(body === undefined || request.chunked === true ? {} : { "content-length": String(body.length) }),
      ...(request.chunked === true ? { "transfer-encoding": "chunked" } : {}),
      ...request.headers
    }
    const outgoing = httpRequest({ host: "127.0.0.1", port, method: request.method, path: request.target, headers })
    if (request.contentType !== undefined) outgoing.setHeader("content-type", contentTypes(request.contentType))
    const timer = setTimeout(() => {
      outgoing.destroy()
      reject(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`))
    }, ANSWER_TIMEOUT_MS)
    outgoing.on("response", (response) => {
      const contentType = response.headers["content-type"] ?? ""
      const status = response.statusCode ?? 0
      if (contentType.startsWith("text/event-stream")) {
        clearTimeout(timer)
        response.destroy()
        return resolve({ status, contentType, text: "" })
      }
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        clearTimeout(timer)
        resolve({ status, contentType, text: Buffer.concat(chunks).toString("utf8") })
      })
      response.on("error", (error) => {
        clearTimeout(timer)
        reject(error)
      })
    })
    outgoing.on("error", (error) => {
      clearTimeout(timer)
      reject(new Error(`the connection failed before an answer: ${error.message}`))
    })
    if (body !== undefined) outgoing.write(body)
    outgoing.end()
  })

const shellQuote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`

/** A shell line that sends `request` again, with the token from the shell variable `tokenVariable`. */
export const asCurl = (baseUrl: string, request: Omit<RawRequest, "token">, tokenVariable: string): string => {
  const parts = [`curl -sS -X ${request.method} ${shellQuote(baseUrl + request.target)}`, `-H "authorization: Bearer $${tokenVariable}"`]
  for (const contentType of request.contentType === undefined ? [] : contentTypes(request.contentType)) {
    parts.push(`-H ${shellQuote(`content-type: ${contentType}`)}`)
  }
  if (request.chunked === true) parts.push("-H 'transfer-encoding: chunked'")
  for (const [name, value] of Object.entries(request.headers ?? {})) parts.push(`-H ${shellQuote(`${name}: ${value}`)}`)
  if (request.body !== undefined) {
    const text = Buffer.from(request.body).toString("utf8")
    parts.push(
      text.length > 600 && request.bodyRecipe !== undefined
        ? `--data-binary "$(node -e ${shellQuote(`process.stdout.write(${request.bodyRecipe})`)})"`
        : `--data-binary ${shellQuote(abbreviate(text, 600))}`
    )
  }
  return parts.join(" ")
}

/** `text` cut in the middle when longer than `max`, saying how much was left out. */
export const abbreviate = (text: string, max: number): string =>
  text.length <= max
    ? text
    : `${text.slice(0, max / 2)}…[${text.length - max} more characters]…${text.slice(text.length - max / 2)}`
