/**
 * Public identifiers: a lowercase prefix, "_", then 26 characters of [a-z2-7] (docs/api-conventions.md).
 * This module holds their schemas only; ids are made on the server by `IdGenerator`
 * (src/services/shared/Ids.ts), time-ordered so that they sort in creation order.
 */
import { Schema } from "effect"

/** The branded schema of one id prefix, which carries its prefix for the generator. */
export const makeId = <const Prefix extends string, const Brand extends string>(
  prefix: Prefix,
  brand: Parameters<typeof Schema.brand<Brand>>[0]
) =>
  Object.assign(
    Schema.String.pipe(
      Schema.check(
        Schema.isPattern(new RegExp(`^${prefix}_[a-z2-7]{26}$`, "u"), {
          message: `must be an id of the form ${prefix}_ followed by 26 characters of [a-z2-7]`
        })
      ),
      Schema.brand<Brand>(brand)
    ),
    { prefix }
  )

/** Any id schema: what `IdGenerator.make` takes. */
export interface IdSchema<Id extends string = string> extends Schema.Codec<Id, string> {
  readonly prefix: string
  /** Checks and brands an id made from the prefix. */
  readonly make: (id: string) => Id
}

export const OrgId = makeId("org", "OrgId")
export type OrgId = typeof OrgId.Type
export const ProjectId = makeId("proj", "ProjectId")
export type ProjectId = typeof ProjectId.Type
export const UserId = makeId("usr", "UserId")
export type UserId = typeof UserId.Type
export const InvitationId = makeId("oinv", "InvitationId")
export type InvitationId = typeof InvitationId.Type
export const ApiKeyId = makeId("key", "ApiKeyId")
export type ApiKeyId = typeof ApiKeyId.Type
export const BrowserSessionId = makeId("bses", "BrowserSessionId")
export type BrowserSessionId = typeof BrowserSessionId.Type

// Configuration domain
export const SecretId = makeId("sec", "SecretId")
export type SecretId = typeof SecretId.Type
export const SecretGrantId = makeId("secgrant", "SecretGrantId")
export type SecretGrantId = typeof SecretGrantId.Type
export const ModelProviderConfigId = makeId("mpc", "ModelProviderConfigId")
export type ModelProviderConfigId = typeof ModelProviderConfigId.Type
export const ConfiguredModelId = makeId("mdl", "ConfiguredModelId")
export type ConfiguredModelId = typeof ConfiguredModelId.Type
export const ModelRevisionId = makeId("mrev", "ModelRevisionId")
export type ModelRevisionId = typeof ModelRevisionId.Type
export const ModelGrantId = makeId("mdlgrant", "ModelGrantId")
export type ModelGrantId = typeof ModelGrantId.Type
export const SkillId = makeId("skl", "SkillId")
export type SkillId = typeof SkillId.Type
export const SkillGrantId = makeId("sklgrant", "SkillGrantId")
export type SkillGrantId = typeof SkillGrantId.Type
export const AgentConfigId = makeId("acfg", "AgentConfigId")
export type AgentConfigId = typeof AgentConfigId.Type

// Agent runtime
export const AgentId = makeId("agt", "AgentId")
export type AgentId = typeof AgentId.Type
export const TurnId = makeId("turn", "TurnId")
export type TurnId = typeof TurnId.Type
export const EventId = makeId("evt", "EventId")
export type EventId = typeof EventId.Type
export const InputId = makeId("inp", "InputId")
export type InputId = typeof InputId.Type
export const ToolCallId = makeId("tcl", "ToolCallId")
export type ToolCallId = typeof ToolCallId.Type
export const InteractionId = makeId("intr", "InteractionId")
export type InteractionId = typeof InteractionId.Type
export const ActorId = makeId("act", "ActorId")
export type ActorId = typeof ActorId.Type
export const ArtifactId = makeId("art", "ArtifactId")
export type ArtifactId = typeof ArtifactId.Type

// Machines
export const MachinePoolId = makeId("mpo", "MachinePoolId")
export type MachinePoolId = typeof MachinePoolId.Type
export const MachinePoolGrantId = makeId("mpogrant", "MachinePoolGrantId")
export type MachinePoolGrantId = typeof MachinePoolGrantId.Type
export const MachineId = makeId("mch", "MachineId")
export type MachineId = typeof MachineId.Type
export const MachineGrantId = makeId("mchgrant", "MachineGrantId")
export type MachineGrantId = typeof MachineGrantId.Type
export const DaemonTokenId = makeId("dtok", "DaemonTokenId")
export type DaemonTokenId = typeof DaemonTokenId.Type

// Workspaces
export const WorkspaceId = makeId("wsp", "WorkspaceId")
export type WorkspaceId = typeof WorkspaceId.Type
export const WorktreeId = makeId("wtr", "WorktreeId")
export type WorktreeId = typeof WorktreeId.Type
export const WorkspaceSessionId = makeId("wss", "WorkspaceSessionId")
export type WorkspaceSessionId = typeof WorkspaceSessionId.Type
export const UserMachinePathId = makeId("ump", "UserMachinePathId")
export type UserMachinePathId = typeof UserMachinePathId.Type
