/**
 * The machine WebSocket's route (`GET /api/v1/machines/ws`, served as /v1/machines/ws like every
 * route): not part of the HttpApi (it is no JSON endpoint), added to the same router, so the
 * guards, CORS and the request log apply to it as to any route. MachineSessions does the rest.
 */
import { HttpRouter } from "effect/http"
import { Effect } from "effect"
import { MACHINE_WS_ROUTE, MachineSessions } from "../../services/machines/MachineSessions.ts"

export const MachineSocketRouteLive = HttpRouter.use((router) =>
  Effect.flatMap(MachineSessions, (sessions) => router.add("GET", MACHINE_WS_ROUTE, sessions.handle))
)
