import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { AgentConfig } from "../../../domain/configuration/agent-config/AgentConfig.ts"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { AgentConfigs } from "../../../services/configuration/AgentConfigs.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

/** 201 is the endpoint's first success; a config found again goes out as the declared 200. */
const existingConfig = HttpServerResponse.schemaJson(AgentConfig)

export const AgentConfigsLive = HttpApiBuilder.group(Api, "agentConfigs", (handlers) =>
  Effect.map(AgentConfigs, (agentConfigs) =>
    handlers
      .handle("create", ({ path, payload }) =>
        Effect.flatMap(
          agentConfigs.create(path.orgID, path.projectID, payload),
          ({ config, created }): Effect.Effect<AgentConfig | HttpServerResponse.HttpServerResponse> =>
            created ? Effect.succeed(config) : existingConfig(config, { status: 200 }).pipe(Effect.orDie)
        ))
      .handle("list", ({ path, urlParams }) => agentConfigs.list(path.orgID, path.projectID, urlParams))
      .handle("get", ({ path }) => agentConfigs.get(path.orgID, path.projectID, path.agentConfigID))))
  .pipe(builtWithOnly(AgentConfigs, Authentication))
