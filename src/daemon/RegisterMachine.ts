/**
 * Registration over HTTP (`POST /api/v1/machines/register`), with the daemon token or personal
 * key, naming the machine id of the last registration so that the same machine is registered
 * again. A refusal (4xx other than 408 and 429) is final: retrying would not change it.
 */
import { HttpClient, HttpClientRequest, HttpClientResponse } from "effect/http"
import { Data, Effect, Option, Redacted, Schema } from "effect"
import { ORG_METADATA_KEY } from "../domain/machines/MachineMetadata.ts"
import type { MachineId } from "../domain/shared/Ids.ts"
import { RegisterMachineRequest, RegisterMachineResponse } from "../domain/machines/Registration.ts"
import { DaemonConfig, machineFacts } from "./DaemonConfig.ts"

export class RegistrationError extends Data.TaggedError("RegistrationError")<{
  readonly message: string
  readonly retryable: boolean
}> {}

const ErrorBody = Schema.Struct({ error: Schema.String, code: Schema.String })

export const REGISTRATION_TIMEOUT = "30 seconds"

/** An error's message with its cause's (the transport error says what failed: refused, reset, unknown host). */
const describe = (error: { readonly message: string; readonly cause?: unknown }): string => {
  const cause = error.cause as { readonly message?: unknown; readonly cause?: unknown } | undefined
  return typeof cause?.message === "string" && cause.message !== "" ? `${error.message}: ${describe(cause as { message: string })}` : error.message
}

const isRetryableStatus = (status: number) => status >= 500 || status === 408 || status === 429

export const registerMachine = (machineId: MachineId | null) =>
  Effect.gen(function*() {
    const config = yield* DaemonConfig
    const client = yield* HttpClient.HttpClient
    const request = yield* HttpClientRequest.post(new URL("api/v1/machines/register", config.server)).pipe(
      HttpClientRequest.bearerToken(Redacted.value(config.token)),
      HttpClientRequest.acceptJson,
      HttpClientRequest.schemaBodyJson(RegisterMachineRequest)({
        machine_name: config.machineName,
        ...machineFacts(),
        machine_id: machineId,
        directories: config.directories,
        // Every time, not only for a new machine: the machine id may name a machine that was
        // deleted, and then the organization is --org's. The organization alone replaces none of a
        // re-registered machine's metadata (docs/machines.md, "Registration").
        ...(Option.isSome(config.organization) ? { metadata: { [ORG_METADATA_KEY]: config.organization.value } } : {})
      }),
      Effect.orDie
    )
    const response = yield* client.execute(request).pipe(
      Effect.timeoutOrElse({
        duration: REGISTRATION_TIMEOUT,
        orElse: () => Effect.fail(new Error(`no answer within ${REGISTRATION_TIMEOUT}`))
      }),
      Effect.mapError((error) =>
        new RegistrationError({ message: `the server ${config.server} cannot be reached: ${describe(error)}`, retryable: true })
      )
    )
    if (response.status >= 200 && response.status < 300) {
      return yield* HttpClientResponse.schemaBodyJson(RegisterMachineResponse)(response).pipe(
        Effect.mapError((error) =>
          new RegistrationError({ message: `the server's answer to registration is not understood: ${error.message}`, retryable: false })
        )
      )
    }
    const body = yield* HttpClientResponse.schemaBodyJson(ErrorBody)(response).pipe(Effect.option)
    const said = Option.match(body, { onNone: () => "", onSome: ({ code, error }) => `: ${code}: ${error}` })
    return yield* Effect.fail(
      new RegistrationError({
        message: `the server refused the registration (HTTP ${response.status})${said}`,
        retryable: isRetryableStatus(response.status)
      })
    )
  }).pipe(Effect.scoped)
