/**
 * The workspaces capability: the workspace-scoped routes of a person (docs/user-settings.md,
 * docs/workspaces.md). Sessions launch agents and wait for daemons' results, so it runs over the
 * workflow engine (the same layer the runtime and machines use, built once).
 */
import { Layer } from "effect"
import { WorkflowEngineLive } from "../../layers/WorkflowEngine.ts"
import { UserSettings } from "./UserSettings.ts"
import { Workspaces } from "./Workspaces.ts"
import { WorkspaceSessions } from "./WorkspaceSessions.ts"
import { WorktreeMigrations } from "./WorktreeMigrations.ts"

export const WorkspacesLive = Layer.mergeAll(UserSettings.layer, Workspaces.layer, WorkspaceSessions.layer, WorktreeMigrations.layer).pipe(
  Layer.provideMerge(WorkflowEngineLive)
)
