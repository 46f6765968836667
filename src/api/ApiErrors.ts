/**
 * The errors every route can answer, whatever its endpoint declares: a request refused before or
 * while it is decoded (400 invalid_request, 408, 413, 415), a route that is not there (404), a bug
 * (500), a database failure that a retry may not meet (503: a deadlock, a lost connection). Effect 3 declared them with `HttpApi.addError`; Effect 4 declares an Api's own errors on
 * a middleware that every endpoint has (Api.ts), so that the OpenAPI document lists them for every
 * operation and the server encodes them with their status. Its implementation maps what escapes a
 * route (a decode failure, a defect) onto them (src/layers/http).
 */
import { HttpApiMiddleware } from "effect/http-api"
import {
  InternalError,
  InvalidRequest,
  NotFound,
  RequestTimeout,
  RequestTooLarge,
  ServiceUnavailable,
  UnsupportedMediaType
} from "../domain/shared/Errors.ts"

export class ApiErrors extends HttpApiMiddleware.Service<ApiErrors>()("ApiErrors", {
  error: [
    InvalidRequest.Wire,
    NotFound.Wire,
    RequestTimeout.Wire,
    RequestTooLarge.Wire,
    UnsupportedMediaType.Wire,
    InternalError.Wire,
    ServiceUnavailable.Wire
  ]
}) {}
