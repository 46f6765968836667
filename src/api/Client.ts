/**
 * The typed client of the Api: `yield* makeClient({ baseUrl })` gives one method per endpoint,
 * grouped as in the Api (`client.organizations.create({ payload: { name } })`), that fails with
 * the error classes of src/domain/Errors.ts. The events stream, decoded as it arrives (stored
 * events and live output): `streamAgentEvents(options, path)` (EventStream.ts).
 */
import { HttpApiClient } from "effect/http-api"
import { HttpClient, HttpClientRequest } from "effect/http"
import { Effect } from "effect"
import { Api } from "./Api.ts"

export { Api }
export { type AgentStreamItem, type AgentStreamOptions, streamAgentEvents } from "./EventStream.ts"

export interface ClientOptions {
  readonly baseUrl?: string
  /** Sent as `Authorization: Bearer <token>` on every request. */
  readonly token?: string
}

export const makeClient = (options: ClientOptions = {}) =>
  HttpApiClient.make(Api, {
    ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    transformClient: (client) =>
      options.token === undefined
        ? client
        : HttpClient.mapRequest(client, HttpClientRequest.bearerToken(options.token))
  })

export type Client = Effect.Success<ReturnType<typeof makeClient>>
