import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { CreateDaemonToken, CreatedDaemonToken, DaemonToken } from "../../domain/machines/DaemonTokens.ts"
import { MachineDescriptor } from "../../domain/machines/Machine.ts"
import { FileContent, WrittenFile } from "../../domain/machines/MachineFiles.ts"
import { FileQuery, MachineGrant, MachineListQuery, UpdateMachine, WriteFileBody } from "../../domain/machines/Machines.ts"
import {
  Conflict,
  DaemonRuntimeUnregistered,
  ExpectedDigestRequired,
  FileContentConflict,
  FileReadOnly,
  Forbidden,
  InvalidRequest,
  NotAFile,
  NotFound,
  PendingWork,
  RequestTooLarge,
  ServiceUnavailable,
  Unprocessable
} from "../../domain/shared/Errors.ts"
import { DaemonTokenId, MachineGrantId, MachineId, OrgId } from "../../domain/shared/Ids.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { grantEndpoints } from "../configuration/GrantEndpoints.ts"
import { OrgPath } from "../tenancy/OrganizationsApi.ts"
import { Authentication } from "../Security.ts"

const MachinePath = Schema.Struct({ orgID: OrgId, machineID: MachineId })
const DaemonTokenPath = Schema.Struct({ orgID: OrgId, daemonTokenID: DaemonTokenId })

/** What reading or writing a file on a machine may answer (docs/machines.md). */
const fileErrors = [
  NotFound.Wire,
  Forbidden.Wire,
  InvalidRequest.Wire,
  NotAFile.Wire,
  FileReadOnly.Wire,
  ExpectedDigestRequired.Wire,
  FileContentConflict.Wire,
  RequestTooLarge.Wire,
  Unprocessable.Wire,
  DaemonRuntimeUnregistered.Wire,
  ServiceUnavailable.Wire
] as const

const grants = grantEndpoints({
  route: "/orgs/:orgID/machines/:machineID",
  resourcePath: MachinePath,
  grantPath: Schema.Struct({ ...MachinePath.fields, grantID: MachineGrantId }),
  grant: MachineGrant,
  noun: "machine",
  whoManages: "Needs the admin or owner role in the organization (a member is 403).",
  whoReads: "Any member of the organization may call it (another member's personal machine is 404).",
  refusals: "A personal machine, or one a pool started, is not granted (400)."
})

export class MachinesApi extends HttpApiGroup.make("machines")
  .annotate(OpenApi.Title, "Machines")
  .add(
    HttpApiEndpoint.post("createDaemonToken", "/orgs/:orgID/daemon-tokens", {
      params: OrgPath,
      payload: CreateDaemonToken,
      success: CreatedDaemonToken.pipe(HttpApiSchema.status(201)),
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Create a daemon token")
      .annotate(
        OpenApi.Description,
        "Answers 201 with the token, shown only in this answer: a daemon registers the organization's " +
          "machines with it. Needs the admin or owner role in the organization (a member is 403)."
      )
  )
  .add(
    HttpApiEndpoint.get("listDaemonTokens", "/orgs/:orgID/daemon-tokens", {
      params: OrgPath,
      query: ListQuery,
      success: Page(DaemonToken),
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "List the organization's daemon tokens")
      .annotate(
        OpenApi.Description,
        "The tokens, without the token itself. Oldest first; paginated (limit, cursor). Needs the admin " +
          "or owner role in the organization (a member is 403)."
      )
  )
  .add(
    HttpApiEndpoint.delete("removeDaemonToken", "/orgs/:orgID/daemon-tokens/:daemonTokenID", {
      params: DaemonTokenPath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire]
    })
      .annotate(OpenApi.Summary, "Revoke a daemon token")
      .annotate(
        OpenApi.Description,
        "Deletes the token: it is refused at once, and the connections of the machines it registered " +
          "close. Needs the admin or owner role in the organization (a member is 403). 404 for an unknown " +
          "token."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/machines", {
      params: OrgPath,
      query: MachineListQuery,
      success: Page(MachineDescriptor),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the organization's machines")
      .annotate(
        OpenApi.Description,
        "The organization's machines and your personal ones. Oldest first; paginated (limit, cursor); " +
          "status keeps the machines in that status (a deleted pool machine is listed only with " +
          "status=deleted). Any member of the organization may call it."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/machines/:machineID", {
      params: MachinePath,
      success: MachineDescriptor,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a machine")
      .annotate(
        OpenApi.Description,
        "Any member of the organization may call it (another member's personal machine is 404)."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/machines/:machineID", {
      params: MachinePath,
      payload: UpdateMachine,
      success: MachineDescriptor,
      error: [NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Rename a machine or change its metadata")
      .annotate(
        OpenApi.Description,
        "An organization machine needs the admin or owner role in the organization (a member is 403); a " +
          "personal machine, being its owner (another member's is 404). 409 when the owner has a machine of " +
          "that name."
      )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/machines/:machineID", {
      params: MachinePath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire, PendingWork.Wire]
    })
      .annotate(OpenApi.Summary, "Delete a machine")
      .annotate(
        OpenApi.Description,
        "Its connection closes; a pool machine is stopped at its provider and kept as deleted. Stop the " +
          "daemon first: a running daemon registers again at once, as a new machine. An organization machine " +
          "needs the admin or owner role in the organization (a member is 403); a personal machine, being " +
          "its owner. 409 pending_work while a tool call runs on it."
      )
  )
  .add(grants.createGrant)
  .add(grants.listGrants)
  .add(grants.removeGrant)
  .add(
    HttpApiEndpoint.get("readFile", "/orgs/:orgID/machines/:machineID/files", {
      params: MachinePath,
      query: FileQuery,
      success: FileContent,
      error: fileErrors
    })
      .annotate(OpenApi.Summary, "Read a file on a machine")
      .annotate(
        OpenApi.Description,
        "Reads a whole file (at most 10 MiB) through the machine's daemon, inside the directories it " +
          "registered: text as utf-8, anything else as base64, with its digest. Any member of the " +
          "organization may call it (another member's personal machine is 404). 400 for a path that is not " +
          "absolute, 403 outside the directories, 404 for a missing file, 409 daemon_runtime_unregistered " +
          "when no daemon is connected, 503 when the daemon does not answer within 60 s."
      )
  )
  .add(
    HttpApiEndpoint.put("writeFile", "/orgs/:orgID/machines/:machineID/files", {
      params: MachinePath,
      query: FileQuery,
      payload: WriteFileBody,
      success: WrittenFile,
      error: fileErrors
    })
      .annotate(OpenApi.Summary, "Write a file on a machine")
      .annotate(
        OpenApi.Description,
        "Creates or replaces a whole file (at most 10 MiB) through the machine's daemon; replacing needs " +
          "expected_digest, the digest last read (428 expected_digest_required without it, 409 " +
          "file_content_conflict when the file changed; both with current_digest). An organization machine " +
          "needs the admin or owner role in the organization (a member is 403); a personal machine, being " +
          "its owner. 403 file_read_only for a file nobody may write, 409 daemon_runtime_unregistered when " +
          "no daemon is connected, 503 when the daemon does not answer within 60 s."
      )
  )
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Machines: computers whose daemon registered with the server. Organization machines (registered with a " +
      "daemon token) are managed by org admins and granted to projects; personal machines (registered with a " +
      "personal API key) are visible to and usable by their owner only. Files on a machine are read and written " +
      "through its daemon, inside the directories it registered"
  )
{}
