/**
 * Who registers a machine (`POST /api/v1/machines/register`): an organization through one of its
 * daemon tokens, a user through a personal API key, or the daemon of a pool machine through the
 * registration token it was started with (its machine's own). `credentialId` is the token's or key's id (the pool's for a
 * pool machine): the machine tokens issued stop working when it is revoked (the pool deleted).
 */
import { Context } from "effect"
import type { ApiKeyId, DaemonTokenId, MachineId, MachinePoolId, OrgId, UserId } from "../shared/Ids.ts"

export type Registrant =
  | { readonly kind: "daemon_token"; readonly orgId: OrgId; readonly credentialId: DaemonTokenId }
  | { readonly kind: "user"; readonly userId: UserId; readonly credentialId: ApiKeyId }
  | {
    readonly kind: "pool_machine"
    readonly orgId: OrgId
    readonly machineId: MachineId
    readonly credentialId: MachinePoolId
    readonly tokenHash: string
  }

export class CurrentRegistrant extends Context.Service<CurrentRegistrant, Registrant>()("CurrentRegistrant") {}
