import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ServiceUnavailable } from "../domain/shared/Errors.ts"

export const HealthStatus = Schema.Struct({ status: Schema.String })

export class HealthApi extends HttpApiGroup.make("health")
  .annotate(OpenApi.Title, "Health")
  .add(
    HttpApiEndpoint.get("live", "/healthz")
      .annotate(OpenApi.Summary, "Check that the server is alive")
      .addSuccess(HealthStatus)
  )
  .add(
    HttpApiEndpoint.get("ready", "/readyz")
      .annotate(OpenApi.Summary, "Check that the server is ready")
      .addSuccess(HealthStatus)
      .addError(ServiceUnavailable.Wire)
  )
  .annotate(OpenApi.Description, "Liveness and readiness probes; no authentication")
{}
