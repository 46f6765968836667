import { HttpApiBuilder } from "effect/http-api"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { DaemonTokens } from "../../../services/machines/DaemonTokens.ts"
import { MachineFiles } from "../../../services/machines/MachineFiles.ts"
import { Machines } from "../../../services/machines/Machines.ts"
import { ApiErrors } from "../../ApiErrors.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const MachinesLive = HttpApiBuilder.group(Api, "machines", (handlers) =>
  Effect.gen(function*() {
    const tokens = yield* DaemonTokens
    const machines = yield* Machines
    const files = yield* MachineFiles
    return handlers
      .handle("createDaemonToken", ({ params, payload }) => tokens.create(params.orgID, payload))
      .handle("listDaemonTokens", ({ params, query }) => tokens.list(params.orgID, query))
      .handle("removeDaemonToken", ({ params }) => tokens.remove(params.orgID, params.daemonTokenID))
      .handle("list", ({ params, query }) => machines.list(params.orgID, query))
      .handle("get", ({ params }) => machines.get(params.orgID, params.machineID))
      .handle("update", ({ params, payload }) => machines.update(params.orgID, params.machineID, payload))
      .handle("remove", ({ params }) => machines.remove(params.orgID, params.machineID))
      .handle("createGrant", ({ params, payload }) => machines.createGrant(params.orgID, params.machineID, payload))
      .handle("listGrants", ({ params, query }) => machines.listGrants(params.orgID, params.machineID, query))
      .handle("removeGrant", ({ params }) => machines.removeGrant(params.orgID, params.machineID, params.grantID))
      .handle("readFile", ({ params, query }) => files.read(params.orgID, params.machineID, query.path))
      .handle("writeFile", ({ params, payload, query }) => files.write(params.orgID, params.machineID, query.path, payload))
  }))
  .pipe(builtWithOnly(DaemonTokens, Machines, MachineFiles, Authentication, ApiErrors))
