/**
 * `GET /`: where to go from here, for a person or a client that found the server: its name and
 * version, the docs page and the OpenAPI document.
 */
import { HttpRouter, HttpServerResponse } from "effect/http"
import { API_VERSION } from "../../api/Api.ts"

export const ROOT_PATH = "/"
export const DOCS_PATH = "/docs"
export const OPENAPI_PATH = "/v1/openapi.json"

export const RootPageLive = HttpRouter.add(
  "GET",
  ROOT_PATH,
  HttpServerResponse.jsonUnsafe({ name: "agent-platform", version: API_VERSION, docs: DOCS_PATH, openapi: OPENAPI_PATH })
)
