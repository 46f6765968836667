import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
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
  noun: "machine pool",
  whoManages: "Needs the admin or owner role in the organization (a member is 403).",
  whoReads: "Any member of the organization may call it."
})

export class MachinePoolsApi extends HttpApiGroup.make("machinePools")
  .annotate(OpenApi.Title, "Machine pools")
  .add(
    HttpApiEndpoint.post("create", "/orgs/:orgID/machine-pools", {
      params: OrgPath,
      payload: CreateMachinePool,
      success: [
        MachinePool.annotate({ description: "a new pool" }).pipe(HttpApiSchema.status(201)),
        MachinePool.annotate({ description: "the existing pool of that name, made by the same body" })
      ],
      error: [InvalidRequest.Wire, NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Create a machine pool")
      .annotate(
        OpenApi.Description,
        "Answers 201 with a new pool, or 200 with the existing pool of that name when the same body " +
          "(defaults applied) is sent again. Needs the admin or owner role in the organization (a member is " +
          "403). 409 when the name is taken by a pool with other settings."
      )
  )
  .add(
    HttpApiEndpoint.post("checkConnection", "/orgs/:orgID/machine-pools/check-connection", {
      params: OrgPath,
      payload: CheckConnection,
      success: ConnectionChecked,
      error: [InvalidRequest.Wire, NotFound.Wire, Forbidden.Wire, Unprocessable.Wire]
    })
      .annotate(OpenApi.Summary, "Check a machine provider's credential and config")
      .annotate(
        OpenApi.Description,
        "Read-only requests to the provider; 422 unprocessable with `details` when it refuses the credential or the " +
          "config. Needs the admin or owner role in the organization (a member is 403)."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/orgs/:orgID/machine-pools", {
      params: OrgPath,
      query: ListQuery,
      success: Page(MachinePool),
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "List the organization's machine pools")
      .annotate(
        OpenApi.Description,
        "Oldest first; paginated (limit, cursor). Any member of the organization may call it."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/orgs/:orgID/machine-pools/:poolID", {
      params: MachinePoolPath,
      success: MachinePool,
      error: NotFound.Wire
    })
      .annotate(OpenApi.Summary, "Get a machine pool")
      .annotate(OpenApi.Description, "The pool with its usage. Any member of the organization may call it.")
  )
  .add(
    HttpApiEndpoint.patch("update", "/orgs/:orgID/machine-pools/:poolID", {
      params: MachinePoolPath,
      payload: UpdateMachinePool,
      success: MachinePool,
      error: [InvalidRequest.Wire, NotFound.Wire, Forbidden.Wire, Conflict.Wire]
    })
      .annotate(OpenApi.Summary, "Change a machine pool's settings")
      .annotate(
        OpenApi.Description,
        "Each field given replaces the setting (null clears an optional one); provider and management_kind " +
          "cannot change, and the result is checked as a create is. Needs the admin or owner role in the " +
          "organization (a member is 403); a cluster pool, managed by the server's operator, is 403. 409 " +
          "when another pool has that name."
      )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/orgs/:orgID/machine-pools/:poolID", {
      params: MachinePoolPath,
      success: HttpApiSchema.NoContent,
      error: [NotFound.Wire, Forbidden.Wire, PendingWork.Wire]
    })
      .annotate(OpenApi.Summary, "Delete a machine pool")
      .annotate(
        OpenApi.Description,
        "Deletes the pool's machines first; refused with pending_work while a tool call runs on one. Needs the " +
          "admin or owner role in the organization (a member is 403); a cluster pool, managed by the server's " +
          "operator, is 403."
      )
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
