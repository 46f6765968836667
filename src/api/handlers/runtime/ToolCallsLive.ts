import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AgentCommands } from "../../../services/runtime/AgentCommands.ts"
import { Agents } from "../../../services/runtime/Agents.ts"
import { Api } from "../../Api.ts"

export const ToolCallsLive = HttpApiBuilder.group(Api, "toolCalls", (handlers) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    const commands = yield* AgentCommands
    return handlers
      .handle("list", ({ path, urlParams }) => agents.toolCalls(path.orgID, path.projectID, path.agentID, urlParams))
      .handle("get", ({ path }) => agents.toolCall(path.orgID, path.projectID, path.agentID, path.toolCallID))
      .handle("submitResult", ({ path, payload }) =>
        commands.submitToolResult(path.orgID, path.projectID, path.agentID, path.toolCallID, payload))
  }))
