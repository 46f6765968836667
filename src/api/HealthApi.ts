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
      .annotate(OpenApi.Description, "200 while the process is up. No authentication.")
  )
  .add(
    HttpApiEndpoint.get("ready", "/readyz", {
      success: HealthStatus,
      error: ServiceUnavailable.Wire
    })
      .annotate(OpenApi.Summary, "Check that the server is ready")
      .annotate(
        OpenApi.Description,
        "200 only when the database answers within 2 s and the newest migration is recorded as applied; " +
          "otherwise 503 service_unavailable. No authentication."
      )
  )
  .annotate(OpenApi.Description, "Liveness and readiness probes; no authentication")
{}
