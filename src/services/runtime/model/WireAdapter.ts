/**
 * What each wire format supplies to the ModelClient: the request it sends and the decoding of
 * what comes back, streamed or whole (with Schemas, ProviderJson.ts). The transport, retries and
 * folding are shared.
 */
import type { Result } from "effect"
import { Redacted } from "effect"
import type { AnswerSize } from "./AnswerSize.ts"
import type { ModelEvent, ModelProviderError, ModelRequest } from "./ModelMessages.ts"

export interface SseEvent {
  readonly event: string
  readonly data: string
}

export interface WireAdapter {
  /** Appended to the request's base URL. */
  readonly path: string
  readonly headers: (request: ModelRequest) => Record<string, string>
  /**
   * The request's body: JSON as UTF-8, in chunks sent one after the other (WireJson.ts: what the
   * conversation's past makes of it is kept between calls).
   */
  readonly body: (request: ModelRequest, stream: boolean) => ReadonlyArray<Uint8Array>
  /**
   * A decoder for one streamed response; an in-stream error fails. What it keeps of items not yet
   * whole (a tool call's arguments as they come) it keeps as `PendingItems`, counted in `size`,
   * the answer's (AnswerSize.ts).
   */
  readonly streamDecoder: (size: AnswerSize) => (event: SseEvent) => Result.Result<ReadonlyArray<ModelEvent>, ModelProviderError>
  /** The events of a whole (non-streamed) response body. */
  readonly decodeResponse: (body: string) => Result.Result<ReadonlyArray<ModelEvent>, ModelProviderError>
}

export const bearer = (request: ModelRequest) => ({ authorization: `Bearer ${Redacted.value(request.apiKey)}` })
