/**
 * The routes HttpApp serves beside the Api's endpoints: the root page, the docs page, the OpenAPI
 * document and the machines' WebSocket. The guards' route table knows them only to name the
 * methods a path takes when a request's method is not one of them (`No route DELETE /docs; this
 * path takes GET, HEAD`), as for the Api's paths.
 */
import { MACHINE_WS_ROUTE } from "../../services/machines/MachineSessions.ts"
import { DOCS_PATH, OPENAPI_PATH, ROOT_PATH } from "./RootPage.ts"
import type { OtherRoute } from "./RouteTable.ts"

export const OTHER_ROUTES: ReadonlyArray<OtherRoute> = [
  { method: "GET", path: ROOT_PATH },
  { method: "GET", path: DOCS_PATH },
  { method: "GET", path: OPENAPI_PATH },
  { method: "GET", path: MACHINE_WS_ROUTE }
]
