import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { ToolCalls } from "../../../services/runtime/ToolCalls.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const ToolCallsLive = HttpApiBuilder.group(Api, "toolCalls", (handlers) =>
  Effect.map(ToolCalls, (toolCalls) =>
    handlers
      .handle("list", ({ path, urlParams }) => toolCalls.list(path.orgID, path.projectID, path.agentID, urlParams))
      .handle("get", ({ path }) => toolCalls.get(path.orgID, path.projectID, path.agentID, path.toolCallID))
      .handle("submitResult", ({ path, payload }) =>
        toolCalls.submitResult(path.orgID, path.projectID, path.agentID, path.toolCallID, payload))))
  .pipe(builtWithOnly(ToolCalls, Authentication))
