/** The error bodies the vendors answer with: OpenAI's `{error: {message, type}}`, Anthropic's `{type: "error", error}`. */
import type { ApiFormat } from "../../domain/configuration/ModelProviderConfigs.ts"
import { newId } from "./ModelAnswer.ts"

const openAiErrorType = (status: number) =>
  status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : status === 401 ? "authentication_error" : "invalid_request_error"

const anthropicErrorType = (status: number) => {
  switch (status) {
    case 400:
      return "invalid_request_error"
    case 401:
      return "authentication_error"
    case 403:
      return "permission_error"
    case 404:
      return "not_found_error"
    case 429:
      return "rate_limit_error"
    case 529:
      return "overloaded_error"
  }
  return "api_error"
}

/** The body of an error answer in `format`'s shape (OpenAI's when the format is unknown). */
export const errorBody = (format: ApiFormat | undefined, status: number, message: string) =>
  format === "anthropic-messages"
    ? { type: "error", error: { type: anthropicErrorType(status), message }, request_id: newId("req_") }
    : { error: { message, type: openAiErrorType(status), param: null, code: null } }
