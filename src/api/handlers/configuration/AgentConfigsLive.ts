import { HttpApiBuilder } from "effect/http-api"
import { HttpServerResponse } from "effect/http"
import { Effect } from "effect"
import { AgentConfig } from "../../../domain/configuration/agent-config/AgentConfig.ts"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { AgentConfigs } from "../../../services/configuration/AgentConfigs.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

/** 201 is the endpoint's first success; a config found again goes out as the declared 200. */
const existingConfig = HttpServerResponse.schemaJson(AgentConfig)

export const AgentConfigsLive = HttpApiBuilder.group(Api, "agentConfigs", (handlers) =>
  Effect.map(Effect.service(AgentConfigs), (agentConfigs) =>
    handlers
      .handle("create", ({ params, payload }) =>
        Effect.flatMap(
          agentConfigs.create(params.orgID, params.projectID, payload),
          ({ config, created }): Effect.Effect<AgentConfig | HttpServerResponse.HttpServerResponse> =>
            created ? Effect.succeed(config) : existingConfig(config, { status: 200 }).pipe(Effect.orDie)
        ))
      .handle("list", ({ params, query }) => agentConfigs.list(params.orgID, params.projectID, query))
      .handle("get", ({ params }) => agentConfigs.get(params.orgID, params.projectID, params.agentConfigID))))
  .pipe(builtWithOnly(AgentConfigs, Authentication, ApiErrors))
