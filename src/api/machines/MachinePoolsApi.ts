import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  CheckConnection,
  ConnectionChecked,
  CreateMachinePool,
  MachinePool,
  MachinePoolGrant,
  UpdateMachinePool
} from "../../domain/machines/MachinePools.ts"
import { Conflict, Forbidden, InvalidRequest, NotFound, PendingWork, Unprocessable } from "../../domain/shared/Errors.ts"
import { MachinePoolGrantId, MachinePoolId, OrgId } from "../../domain/shared/Ids.ts"
import { ListQuery, Page } from "../../domain/shared/Pagination.ts"
import { grantEndpoints } from "../configuration/GrantEndpoints.ts"
import { Authentication } from "../Security.ts"
import { OrgPath } from "../tenancy/OrganizationsApi.ts"

export const MachinePoolPath = Schema.Struct({ orgID: OrgId, poolID: MachinePoolId })

const grants = grantEndpoints({
  route: "/orgs/:orgID/machine-pools/:poolID",
  resourcePath: MachinePoolPath,
  grantPath: Schema.Struct({ ...MachinePoolPath.fields, grantID: MachinePoolGrantId }),
  grant: MachinePoolGrant,
  noun: "machine pool"
})

export class MachinePoolsApi extends HttpApiGroup.make("machinePools")
  .annotate(OpenApi.Title, "Machine pools")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/machine-pools")
      .annotate(OpenApi.Summary, "Create a machine pool")
      .setPath(OrgPath)
      .setPayload(CreateMachinePool)
      .addSuccess(MachinePool.annotations({ description: "a new pool" }), { status: 201 })
      .addSuccess(MachinePool.annotations({ description: "the existing pool of that name, made by the same body" }))
      .addError(InvalidRequest.Wire)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.post("checkConnection", "/orgs/:orgID/machine-pools/check-connection")
      .annotate(OpenApi.Summary, "Check a machine provider's credential and config")
      .setPath(OrgPath)
      .setPayload(CheckConnection)
      .addSuccess(ConnectionChecked)
      .addError(InvalidRequest.Wire)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Unprocessable.Wire)
      .annotate(
        OpenApi.Description,
        "Read-only requests to the provider; 422 unprocessable with `details` when it refuses the credential or the config"
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/machine-pools")
      .annotate(OpenApi.Summary, "List the organization's machine pools")
      .setPath(OrgPath)
      .setUrlParams(ListQuery)
      .addSuccess(Page(MachinePool))
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/machine-pools/:poolID")
      .annotate(OpenApi.Summary, "Get a machine pool")
      .setPath(MachinePoolPath)
      .addSuccess(MachinePool)
      .addError(NotFound.Wire)
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/machine-pools/:poolID")
      .annotate(OpenApi.Summary, "Change a machine pool's settings")
      .setPath(MachinePoolPath)
      .setPayload(UpdateMachinePool)
      .addSuccess(MachinePool)
      .addError(InvalidRequest.Wire)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(Conflict.Wire)
  )
  .add(
    HttpApiEndpoint.del("remove", "/orgs/:orgID/machine-pools/:poolID")
      .annotate(OpenApi.Summary, "Delete a machine pool")
      .annotate(OpenApi.Description, "Deletes the pool's machines first; refused with pending_work while a tool call runs on one.")
      .setPath(MachinePoolPath)
      .addSuccess(Schema.Void)
      .addError(NotFound.Wire)
      .addError(Forbidden.Wire)
      .addError(PendingWork.Wire)
  )
  .add(grants.createGrant)
  .add(grants.listGrants)
  .add(grants.removeGrant)
  .middleware(Authentication)
  .annotate(
    OpenApi.Description,
    "Machine pools: a provider (docker or local) with its config, default machine sizes and environment, and limits; " +
      "managed by org admins and granted to projects, whose agent configs name them in machine_sources. " +
      "Provisioning machines from pools is not built yet: usage stays zero"
  )
{}
