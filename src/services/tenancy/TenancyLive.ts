/** The tenancy capability: users, API keys and their rate, browser sessions, organizations, members, invitations, projects, access. */
import { Layer } from "effect"
import { Access } from "./Access.ts"
import { ApiKeys } from "./ApiKeys.ts"
import { BrowserSessions } from "./BrowserSessions.ts"
import { Invitations } from "./Invitations.ts"
import { KeyRateLimits } from "./KeyRateLimits.ts"
import { Members } from "./Members.ts"
import { Organizations } from "./Organizations.ts"
import { ProjectMembers } from "./ProjectMembers.ts"
import { Projects } from "./Projects.ts"
import { Users } from "./Users.ts"

export const TenancyLive = Layer.mergeAll(
  Access.layer,
  Users.layer,
  ApiKeys.layer,
  KeyRateLimits.layer,
  BrowserSessions.layer,
  Organizations.layer,
  Members.layer,
  Invitations.layer,
  Projects.layer,
  ProjectMembers.layer
)
