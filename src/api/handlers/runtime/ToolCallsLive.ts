import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { ToolCalls } from "../../../services/runtime/ToolCalls.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const ToolCallsLive = HttpApiBuilder.group(Api, "toolCalls", (handlers) =>
  Effect.map(Effect.service(ToolCalls), (toolCalls) =>
    handlers
      .handle("list", ({ params, query }) => toolCalls.list(params.orgID, params.projectID, params.agentID, query))
      .handle("get", ({ params }) => toolCalls.get(params.orgID, params.projectID, params.agentID, params.toolCallID))
      .handle("submitResult", ({ params, payload }) =>
        toolCalls.submitResult(params.orgID, params.projectID, params.agentID, params.toolCallID, payload))))
  .pipe(builtWithOnly(ToolCalls, Authentication, ApiErrors))
