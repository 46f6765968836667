/** The workspaces capability: the workspace-scoped routes of a person (so far, their settings). */
import { Layer } from "effect"
import { UserSettings } from "./UserSettings.ts"

export const WorkspacesLive = Layer.mergeAll(UserSettings.Default)
