/**
 * The coding settings of a workspace session (docs/workspaces.md, "The session's agent"): the
 * user's `code` settings with the session's overrides, and the built-in tools' permissions of
 * each `code.mode`.
 */
import type { UserSettings } from "./UserSettings.ts"
import type { SessionSettings } from "./Workspaces.ts"

export type CodeSettings = NonNullable<UserSettings["code"]>

/** The user's `code` settings with the session's overrides on top (providers merge entry by entry). */
export const effectiveCode = (user: UserSettings, session: SessionSettings | null | undefined): CodeSettings => {
  const base = user.code ?? {}
  const over = session?.code ?? {}
  const providers: Record<string, { model?: string; thinking?: "none" | "low" | "medium" | "high" }> = {}
  for (const [key, value] of Object.entries(base.providers ?? {})) providers[key] = { ...value }
  for (const [key, value] of Object.entries(over.providers ?? {})) providers[key] = { ...providers[key], ...value }
  const mode = over.mode ?? base.mode
  const defaultProvider = over.default_provider ?? base.default_provider
  return {
    ...(mode === undefined ? {} : { mode }),
    ...(defaultProvider === undefined ? {} : { default_provider: defaultProvider }),
    providers
  }
}

/** The built-in tools' permissions for a mode (docs/workspaces.md, "The session's agent"). */
export const toolsOf = (mode: CodeSettings["mode"]) => {
  switch (mode) {
    case "auto":
      return { write_file: { permission: "allow" }, edit_file: { permission: "allow" }, run_command: { permission: "allow" } }
    case "accept_edits":
      return { write_file: { permission: "allow" }, edit_file: { permission: "allow" }, run_command: { permission: "ask" } }
    case "plan":
      return { write_file: { enabled: false }, edit_file: { enabled: false }, run_command: { enabled: false } }
    case "ask":
    case undefined:
      return { write_file: { permission: "ask" }, edit_file: { permission: "ask" }, run_command: { permission: "ask" } }
  }
}
