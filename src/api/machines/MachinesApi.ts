import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
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

const grants = grantEndpoints({
  route: "/orgs/:orgID/machines/:machineID",
  resourcePath: MachinePath,
  grantPath: Schema.Struct({ ...MachinePath.fields, grantID: MachineGrantId }),
  grant: MachineGrant,
  noun: "machine"
})

export class MachinesApi extends HttpApiGroup.make("machines")
  .annotate(OpenApi.Title, "Machines")
  .add(
    HttpApiEndpoint.post("createDaemonToken", "/orgs/:orgID/daemon-tokens")
      .annotate(OpenApi.Summary, "Create a daemon token")
      .setPath(OrgPath)
      .setPayload(CreateDaemonToken)
      .addSuccess(CreatedDaemonToken, { status: 201 })
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.get("listDaemonTokens", "/orgs/:orgID/daemon-tokens")
      .annotate(OpenApi.Summary, "List the organization's daemon tokens")
      .setPath(OrgPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(DaemonToken))
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.del("removeDaemonToken", "/orgs/:orgID/daemon-tokens/:daemonTokenID")
      .annotate(OpenApi.Summary, "Revoke a daemon token")
      .setPath(DaemonTokenPath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/machines")
      .annotate(OpenApi.Summary, "List the organization's machines")
      .setPath(OrgPath)
      .setUrlParams(MachineListQuery)
      .addSuccess(Page(MachineDescriptor))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/machines/:machineID")
      .annotate(OpenApi.Summary, "Get a machine")
      .setPath(MachinePath)
      .addSuccess(MachineDescriptor)
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/machines/:machineID")
      .annotate(OpenApi.Summary, "Rename a machine or change its metadata")
      .setPath(MachinePath)
      .setPayload(UpdateMachine)
      .addSuccess(MachineDescriptor)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/machines/:machineID")
      .annotate(OpenApi.Summary, "Delete a machine")
      .setPath(MachinePath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(PendingWork.Wire)
  )
  .add(grants.createGrant)
  .add(grants.listGrants)
  .add(grants.removeGrant)
  .add(
    HttpApiEndpoint.get("readFile", "/orgs/:orgID/machines/:machineID/files")
      .annotate(OpenApi.Summary, "Read a file on a machine")
      .setPath(MachinePath)
      .setUrlParams(FileQuery)
      .addSuccess(FileContent)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(InvalidRequest.Wire)
      .addError(NotAFile.Wire)
      .addError(FileReadOnly.Wire)
      .addError(ExpectedDigestRequired.Wire)
      .addError(FileContentConflict.Wire)
      .addError(RequestTooLarge.Wire)
      .addError(Unprocessable.Wire)
      .addError(DaemonRuntimeUnregistered.Wire)
      .addError(ServiceUnavailable.Wire)
  )
  .add(
    HttpApiEndpoint.put("writeFile", "/orgs/:orgID/machines/:machineID/files")
      .annotate(OpenApi.Summary, "Write a file on a machine")
      .setPath(MachinePath)
      .setUrlParams(FileQuery)
      .setPayload(WriteFileBody)
      .addSuccess(WrittenFile)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(InvalidRequest.Wire)
      .addError(NotAFile.Wire)
      .addError(FileReadOnly.Wire)
      .addError(ExpectedDigestRequired.Wire)
      .addError(FileContentConflict.Wire)
      .addError(RequestTooLarge.Wire)
      .addError(Unprocessable.Wire)
      .addError(DaemonRuntimeUnregistered.Wire)
      .addError(ServiceUnavailable.Wire)
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
