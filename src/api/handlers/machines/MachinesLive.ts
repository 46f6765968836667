import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { builtWithOnly } from "../../../layers/http/BuiltWithOnly.ts"
import { DaemonTokens } from "../../../services/machines/DaemonTokens.ts"
import { MachineFiles } from "../../../services/machines/MachineFiles.ts"
import { Machines } from "../../../services/machines/Machines.ts"
import { Api } from "../../Api.ts"
import { Authentication } from "../../Security.ts"

export const MachinesLive = HttpApiBuilder.group(Api, "machines", (handlers) =>
  Effect.gen(function*() {
    const tokens = yield* DaemonTokens
    const machines = yield* Machines
    const files = yield* MachineFiles
    return handlers
      .handle("createDaemonToken", ({ path, payload }) => tokens.create(path.orgID, payload))
      .handle("listDaemonTokens", ({ path, urlParams }) => tokens.list(path.orgID, urlParams))
      .handle("removeDaemonToken", ({ path }) => tokens.remove(path.orgID, path.daemonTokenID))
      .handle("list", ({ path, urlParams }) => machines.list(path.orgID, urlParams))
      .handle("get", ({ path }) => machines.get(path.orgID, path.machineID))
      .handle("update", ({ path, payload }) => machines.update(path.orgID, path.machineID, payload))
      .handle("remove", ({ path }) => machines.remove(path.orgID, path.machineID))
      .handle("createGrant", ({ path, payload }) => machines.createGrant(path.orgID, path.machineID, payload))
      .handle("listGrants", ({ path, urlParams }) => machines.listGrants(path.orgID, path.machineID, urlParams))
      .handle("removeGrant", ({ path }) => machines.removeGrant(path.orgID, path.machineID, path.grantID))
      .handle("readFile", ({ path, urlParams }) => files.read(path.orgID, path.machineID, urlParams.path))
      .handle("writeFile", ({ path, payload, urlParams }) => files.write(path.orgID, path.machineID, urlParams.path, payload))
  }))
  .pipe(builtWithOnly(DaemonTokens, Machines, MachineFiles, Authentication))
