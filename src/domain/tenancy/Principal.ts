/**
 * Who is calling: a user (through a personal API key), or an organization (through an
 * organization API key, acting for that organization only, with the key's role).
 */
import { Context } from "effect"
import type { ApiKeyId, OrgId, UserId } from "../shared/Ids.ts"
import type { AssignableRole } from "./Organizations.ts"

export type Principal =
  | { readonly kind: "user"; readonly userId: UserId; readonly keyId: ApiKeyId }
  | { readonly kind: "organization"; readonly orgId: OrgId; readonly role: AssignableRole; readonly keyId: ApiKeyId }

export class CurrentPrincipal extends Context.Tag("CurrentPrincipal")<CurrentPrincipal, Principal>() {}
