/**
 * What each wire format supplies to the ModelClient: the request it sends and the decoding of
 * what comes back, streamed or whole. The transport, retries and folding are shared.
 */
import { Redacted } from "effect"
import type { ModelEvent, ModelRequest } from "./ModelMessages.ts"
import { ModelProviderError } from "./ModelMessages.ts"

export interface SseEvent {
  readonly event: string
  readonly data: string
}

export interface WireAdapter {
  /** Appended to the request's base URL. */
  readonly path: string
  readonly headers: (request: ModelRequest) => Record<string, string>
  readonly body: (request: ModelRequest, stream: boolean) => Record<string, unknown>
  /** A decoder for one streamed response (it keeps the state of partial blocks). Throws ModelProviderError for an in-stream error. */
  readonly streamDecoder: () => (event: SseEvent) => ReadonlyArray<ModelEvent>
  /** The events of a whole (non-streamed) response body. */
  readonly decodeResponse: (body: unknown) => ReadonlyArray<ModelEvent>
  /** The provider's message from an error body. */
  readonly errorMessage: (body: unknown) => string | undefined
}

export const bearer = (request: ModelRequest) => ({ authorization: `Bearer ${Redacted.value(request.apiKey)}` })

/** Reads `path` from an untyped JSON value. */
export const at = (value: unknown, ...path: ReadonlyArray<string | number>): unknown => {
  let current = value
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined
    current = (current as Record<string | number, unknown>)[key]
  }
  return current
}

export const numberAt = (value: unknown, ...path: ReadonlyArray<string | number>) => {
  const found = at(value, ...path)
  return typeof found === "number" ? found : 0
}

export const stringAt = (value: unknown, ...path: ReadonlyArray<string | number>) => {
  const found = at(value, ...path)
  return typeof found === "string" ? found : undefined
}

export const arrayAt = (value: unknown, ...path: ReadonlyArray<string | number>): ReadonlyArray<unknown> => {
  const found = at(value, ...path)
  return Array.isArray(found) ? found : []
}

export const parseJson = (data: string): unknown => {
  try {
    return JSON.parse(data)
  } catch {
    throw new ModelProviderError({ status: null, message: `The provider sent malformed JSON: ${data.slice(0, 200)}` })
  }
}
