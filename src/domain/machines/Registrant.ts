/**
 * Who registers a machine (`POST /api/v1/machines/register`): an organization through one of its
 * daemon tokens, or a user through a personal API key. `credentialId` is the token's or key's id:
 * the machine tokens issued stop working when it is revoked.
 */
import { Context } from "effect"
import type { ApiKeyId, DaemonTokenId, OrgId, UserId } from "../shared/Ids.ts"

export type Registrant =
  | { readonly kind: "daemon_token"; readonly orgId: OrgId; readonly credentialId: DaemonTokenId }
  | { readonly kind: "user"; readonly userId: UserId; readonly credentialId: ApiKeyId }

export class CurrentRegistrant extends Context.Tag("CurrentRegistrant")<CurrentRegistrant, Registrant>() {}
