/**
 * Every URL an agent config makes the platform call, with its place in the document: MCP
 * servers (its own and its inline subagents'), the event webhook and the interaction handlers.
 * The operator's network policy checks them (docs/operations.md, "Private network targets").
 */
import type { AgentConfigDefinition, McpServer } from "./Definition.ts"

export interface ConfiguredUrl {
  readonly path: ReadonlyArray<string>
  readonly url: string
}

const mcpUrls = (prefix: ReadonlyArray<string>, servers: Readonly<Record<string, McpServer>> | undefined) =>
  Object.entries(servers ?? {}).map(([name, server]): ConfiguredUrl => ({ path: [...prefix, "mcp", name, "url"], url: server.url }))

export const urlsOf = (definition: AgentConfigDefinition): ReadonlyArray<ConfiguredUrl> => [
  ...mcpUrls([], definition.mcp),
  ...Object.entries(definition.subagents ?? {}).flatMap(([name, subagent]) => mcpUrls(["subagents", name], subagent.mcp)),
  ...(definition.event_webhook === undefined ? [] : [{ path: ["event_webhook", "url"], url: definition.event_webhook.url }]),
  ...Object.entries(definition.interaction_handlers ?? {}).map(([name, handler]): ConfiguredUrl => ({
    path: ["interaction_handlers", name, "url"],
    url: handler.url
  }))
]
