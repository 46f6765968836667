import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { AgentCommands } from "../../../services/runtime/AgentCommands.ts"
import { Agents } from "../../../services/runtime/Agents.ts"
import { Api } from "../../Api.ts"

export const InteractionsLive = HttpApiBuilder.group(Api, "interactions", (handlers) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    const commands = yield* AgentCommands
    return handlers
      .handle("list", ({ path, urlParams }) => agents.projectInteractions(path.orgID, path.projectID, urlParams))
      .handle("listForAgent", ({ path, urlParams }) =>
        agents.agentInteractions(path.orgID, path.projectID, path.agentID, urlParams))
      .handle("resolve", ({ path, payload }) =>
        commands.resolveInteraction(path.orgID, path.projectID, path.interactionID, payload))
  }))
