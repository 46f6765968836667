import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { ServiceUnavailable } from "../domain/shared/Errors.ts"

export const HealthStatus = Schema.Struct({ status: Schema.String })

export class HealthApi extends HttpApiGroup.make("health")
  .annotate(OpenApi.Title, "Health")
  .add(
    HttpApiEndpoint.get("live", "/healthz", {
      success: HealthStatus
    })
      .annotate(OpenApi.Summary, "Check that the server is alive")
  )
  .add(
    HttpApiEndpoint.get("ready", "/readyz", {
      success: HealthStatus,
      error: ServiceUnavailable.Wire
    })
      .annotate(OpenApi.Summary, "Check that the server is ready")
  )
  .annotate(OpenApi.Description, "Liveness and readiness probes; no authentication")
{}
