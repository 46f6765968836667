/**
 * Who is calling: a user (through a personal API key), or an organization (through an
 * organization API key, acting for that organization only, with the key's role).
 */
import { Context } from "effect"
import type { ApiKeyId, OrgId, ProjectId, UserId } from "../shared/Ids.ts"
import type { AssignableRole, OrgRole } from "./Members.ts"
import type { ProjectRole } from "./ProjectMembers.ts"

/**
 * The caller's standing in the organization, and the project, that its request's path names,
 * read with its key in the same statement so that the request's access check need not read it
 * again (Access). Only a path's well-formed ids are read so (a malformed one is the route's 400).
 */
export interface PathStanding {
  readonly orgId: OrgId
  readonly projectId: ProjectId | undefined
  /** The user's role in the organization; null when not a member, and for an organization key. */
  readonly role: OrgRole | null
  /** Whether the path's project is the organization's (false without a project in the path). */
  readonly projectFound: boolean
  /** The user's role in the project; null when not a project member. */
  readonly projectRole: ProjectRole | null
}

export type Principal =
  | { readonly kind: "user"; readonly userId: UserId; readonly keyId: ApiKeyId; readonly standing?: PathStanding }
  | {
    readonly kind: "organization"
    readonly orgId: OrgId
    readonly role: AssignableRole
    readonly keyId: ApiKeyId
    readonly standing?: PathStanding
  }

export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("CurrentPrincipal") {}
