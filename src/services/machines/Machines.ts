/**
 * Machines (docs/machines.md): registration by a daemon, and the organization routes. An
 * organization machine (registered with a daemon token) is visible to every member and managed
 * by org admins, who grant it to projects; a personal machine (registered with a personal API
 * key) is visible to, managed and usable by its owner only, in every project of its organization.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { OBSERVED_PLATFORM_KEY, ORG_METADATA_KEY } from "../../domain/machines/MachineMetadata.ts"
import type { MachineListQuery, UpdateMachine } from "../../domain/machines/Machines.ts"
import { CurrentRegistrant, type Registrant } from "../../domain/machines/Registrant.ts"
import type { RegisterMachineRequest, RegisterMachineResponse } from "../../domain/machines/Registration.ts"
import { Conflict, InvalidRequest, NotFound, PendingWork } from "../../domain/shared/Errors.ts"
import { MachineId, OrgId, type UserId } from "../../domain/shared/Ids.ts"
import { Grants, personalNotGranted } from "../configuration/Grants.ts"
import { replaceFailure, someOrFail } from "../shared/Failures.ts"
import { sha256Hex } from "../shared/Hash.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { listOf, paged } from "../shared/Paging.ts"
import type { RowLock } from "../shared/Sql.ts"
import { Transactions } from "../shared/Transactions.ts"
import { Access } from "../tenancy/Access.ts"
import { MembersRepository } from "../tenancy/MembersRepository.ts"
import { MachineGrantsRepository } from "./MachineGrantsRepository.ts"
import { MachineHub } from "./MachineHub.ts"
import { MachineRequestsRepository } from "./MachineRequestsRepository.ts"
import { MachinesRepository } from "./MachinesRepository.ts"
import { type MachineFacts, type StoredMachine, toDescriptor } from "./StoredMachine.ts"
import { MachineTokens } from "./MachineTokens.ts"
import { PoolMachines } from "./PoolMachines.ts"

/** Where a daemon opens its WebSocket (served under /v1 too). */
export const MACHINE_WS_PATH = "/api/v1/machines/ws"

/**
 * What a registration tells of its machine: the daemon's own facts, and `metadata` as the machine
 * keeps it with the platform the daemon registered from.
 */
const factsOf = (input: RegisterMachineRequest, metadata: MachineFacts["metadata"], credentialId: string): MachineFacts => ({
  name: input.machine_name,
  hostname: input.hostname,
  platform: input.platform,
  architecture: input.architecture,
  daemon_version: input.daemon_version,
  directories: input.directories ?? [],
  metadata: { ...metadata, [OBSERVED_PLATFORM_KEY]: input.platform },
  credential_id: credentialId
})

const make = Effect.gen(function*() {
  const machines = yield* MachinesRepository
  const machineGrants = yield* MachineGrantsRepository
  const requests = yield* MachineRequestsRepository
  const grants = yield* Grants
  const access = yield* Access
  const members = yield* MembersRepository
  const ids = yield* IdGenerator
  const tokens = yield* MachineTokens
  const hub = yield* MachineHub
  const poolMachines = yield* PoolMachines
  const { transaction } = yield* Transactions

  const notFound = (machineId: MachineId) => () => new NotFound({ error: `Machine ${machineId} not found` })
  const nameTaken = (name: string, personal: boolean) => () =>
    new Conflict({
      error: personal
        ? `You have a machine named "${name}" in this organization already; pick another name (--name) or delete that machine`
        : `The organization has a machine named "${name}" already; pick another name (--name) or delete that machine`
    })

  /** A machine of the organization the caller sees: an organization machine, or one of the caller's own. */
  const visible = (orgId: OrgId, machineId: MachineId, lock: RowLock = "none") =>
    Effect.gen(function*() {
      yield* access.orgRole(orgId)
      const userId = yield* access.callerUserId
      return yield* machines.findVisible(orgId, userId, machineId, lock).pipe(someOrFail(notFound(machineId)))
    })

  /** A visible machine the caller may change: org admins change organization machines, owners their own. */
  const manageable = (orgId: OrgId, machineId: MachineId, lock: RowLock = "none") =>
    Effect.gen(function*() {
      const machine = yield* visible(orgId, machineId, lock)
      if (machine.owner_user_id === null) yield* access.requireOrgRole(orgId, "admin")
      return machine
    })

  const list = (orgId: OrgId, query: MachineListQuery) =>
    Effect.gen(function*() {
      yield* access.orgRole(orgId)
      const userId = yield* access.callerUserId
      const page = yield* paged(
        listOf("machines", orgId, userId, query.status),
        query,
        (keyset) => machines.page(orgId, userId, query.status ?? null, keyset),
        (m) => m.id
      )
      return { ...page, data: page.data.map(toDescriptor) }
    })

  const get = (orgId: OrgId, machineId: MachineId) => Effect.map(visible(orgId, machineId), toDescriptor)

  const update = (orgId: OrgId, machineId: MachineId, input: UpdateMachine) =>
    transaction(Effect.gen(function*() {
      const machine = yield* manageable(orgId, machineId, "update")
      const name = input.name ?? machine.name
      const metadata = input.metadata === undefined
        ? machine.metadata
        : { ...input.metadata, [OBSERVED_PLATFORM_KEY]: machine.platform }
      const updated = yield* machines.update(machineId, name, metadata).pipe(
        replaceFailure("UniqueViolation", nameTaken(name, machine.owner_user_id !== null), "Debug")
      )
      return toDescriptor(updated)
    }))

  /**
   * Refused while a tool call runs on the machine; closes its connection once deleted. A pool
   * machine is stopped at its provider and kept as `deleted` (docs/machine-pools.md).
   */
  const remove = (orgId: OrgId, machineId: MachineId) =>
    Effect.gen(function*() {
      const poolMachine = yield* transaction(Effect.gen(function*() {
        const machine = yield* manageable(orgId, machineId, "update")
        if (yield* requests.toolCallRunningOn(machineId)) {
          return yield* Effect.fail(
            new PendingWork({
              error: `A tool call is running on machine ${machineId}; cancel the agent's turn or wait for it to finish`
            })
          )
        }
        if (machine.pool_state === null) return yield* Effect.as(machines.remove(machineId), Option.none())
        return yield* machines.setPoolState(machineId, ["provisioning", "running"], "deleting", "deleted through the API")
      }))
      if (Option.isSome(poolMachine)) yield* poolMachines.destroy(poolMachine.value)
      yield* hub.machineDeleted(machineId)
    })

  /**
   * Only organization machines are granted; a personal machine is usable by its owner alone, a
   * pool machine by the agent it was started for.
   */
  const grantable = (orgId: OrgId, machineId: MachineId) =>
    Effect.gen(function*() {
      const machine = yield* manageable(orgId, machineId)
      if (machine.machine_pool_id !== null) {
        return yield* Effect.fail(
          new InvalidRequest({
            error: `Machine ${machineId} was started by machine pool ${machine.machine_pool_id} for one agent and is not ` +
              "granted to projects; grant the pool instead (POST /orgs/{orgID}/machine-pools/{poolID}/grants)"
          })
        )
      }
      if (machine.owner_user_id !== null) {
        return yield* Effect.fail(personalNotGranted("Machine", machineId))
      }
      return machine
    })

  const { createGrant, listGrants, removeGrant } = grants.operations(machineGrants, { grantable, visible })

  /** The organization of the user's own machine `machineId`, while the user is still a member of it. */
  const ownMachineOrganization = (userId: UserId, machineId: MachineId | null | undefined) =>
    machineId === undefined || machineId === null
      ? Effect.succeedNone
      : Effect.flatMap(machines.findById(machineId), (machine) =>
        Option.isSome(machine) && machine.value.owner_user_id === userId
          ? Effect.map(members.find(machine.value.org_id, userId), Option.as(machine.value.org_id))
          : Effect.succeedNone)

  /** The organization `metadata.org_id` names, if it names one; `invalid_request` when it is no organization id. */
  const namedOrganization = (input: RegisterMachineRequest) => {
    const named = input.metadata?.[ORG_METADATA_KEY]
    if (named === undefined) return Effect.succeedNone
    return Option.match(Schema.decodeUnknownOption(OrgId)(named), {
      onSome: (orgId) => Effect.succeedSome(orgId),
      onNone: () =>
        Effect.fail(
          new InvalidRequest({
            error: `metadata.${ORG_METADATA_KEY}: ${JSON.stringify(named)} is not an organization id (org_ and 26 characters)`,
            issues: [{ path: `/metadata/${ORG_METADATA_KEY}`, message: "must be an organization id (org_ and 26 characters)" }]
          })
        )
    })
  }

  /**
   * The organization a personal API key registers into (docs/machines.md, "Registration"): the one
   * `metadata.org_id` names; else, when `machine_id` is one of the user's machines, that machine's;
   * else the user's only one.
   */
  const userOrganization = (userId: UserId, input: RegisterMachineRequest) =>
    Effect.gen(function*() {
      const named = yield* namedOrganization(input)
      if (Option.isSome(named)) {
        if (Option.isNone(yield* members.find(named.value, userId))) {
          return yield* Effect.fail(new NotFound({ error: `Organization ${named.value} (metadata.${ORG_METADATA_KEY}) not found` }))
        }
        return named.value
      }
      const own = yield* ownMachineOrganization(userId, input.machine_id)
      if (Option.isSome(own)) return own.value
      const orgIds = yield* members.orgIdsOf(userId)
      if (orgIds.length === 1) return orgIds[0]
      return yield* Effect.fail(
        new InvalidRequest({
          error: orgIds.length === 0
            ? "You are not a member of any organization; a personal machine belongs to one of yours"
            : `You are a member of ${orgIds.length} organizations; name the machine's one in metadata.${ORG_METADATA_KEY} ` +
              "(the daemon's --org), or register with a daemon token of the organization",
          issues: [{ path: `/metadata/${ORG_METADATA_KEY}`, message: "names the organization of the machine" }]
        })
      )
    })

  /**
   * The organization a daemon token registers into: its own. A `metadata.org_id` naming another
   * (a daemon's --org of another organization) is refused as a personal key's naming one of
   * someone else's is, not stored as metadata that says otherwise.
   */
  const tokenOrganization = (orgId: OrgId, input: RegisterMachineRequest) =>
    Effect.flatMap(namedOrganization(input), (named) =>
      Option.isNone(named) || named.value === orgId ? Effect.succeed(orgId) : Effect.fail(
        new NotFound({
          error: `Organization ${named.value} (metadata.${ORG_METADATA_KEY}) not found: a daemon token registers machines in its own ` +
            `organization, ${orgId}; start the daemon with --org ${orgId}, or without --org`
        })
      ))

  /** Who registers with a pool machine's registration token: the live machine it was made for. */
  const poolRegistrant = (token: string) =>
    Effect.gen(function*() {
      const tokenHash = sha256Hex(token)
      const machine = yield* machines.byRegistrationToken(tokenHash)
      if (Option.isNone(machine) || machine.value.machine_pool_id === null) return Option.none<Registrant>()
      return Option.some<Registrant>({
        kind: "pool_machine",
        orgId: machine.value.org_id,
        machineId: machine.value.id,
        credentialId: machine.value.machine_pool_id,
        tokenHash
      })
    })

  /** A registration of a pool machine's daemon: the machine the token was made for, whatever it asks. */
  const registerPoolMachine = (input: RegisterMachineRequest, tokenHash: string, credentialId: string) =>
    Effect.gen(function*() {
      const machine = yield* machines.registerPoolMachine(tokenHash, factsOf(input, input.metadata ?? {}, credentialId)).pipe(
        someOrFail(() => new Conflict({ error: "This pool machine was deleted meanwhile" }))
      )
      return yield* registered(machine, credentialId)
    })

  const registered = (machine: StoredMachine, credentialId: string) =>
    Effect.map(tokens.issue(machine.id, credentialId), (token): RegisterMachineResponse => ({
      machine: toDescriptor(machine),
      machine_token: token.token,
      machine_token_expires_in: token.expiresIn,
      machine_ws_path: MACHINE_WS_PATH
    }))

  /** `POST /api/v1/machines/register`: a new machine, or the same one again when `machine_id` names one of the caller's. */
  const register = (input: RegisterMachineRequest) =>
    Effect.gen(function*() {
      const registrant = yield* CurrentRegistrant
      if (registrant.kind === "pool_machine") {
        return yield* registerPoolMachine(input, registrant.tokenHash, registrant.credentialId)
      }
      const orgId = registrant.kind === "daemon_token"
        ? yield* tokenOrganization(registrant.orgId, input)
        : yield* userOrganization(registrant.userId, input)
      const ownerUserId = registrant.kind === "user" ? registrant.userId : null
      const facts = (previous: Option.Option<StoredMachine>) => {
        const { [OBSERVED_PLATFORM_KEY]: _, ...kept } = Option.match(previous, {
          onNone: () => ({}) as Readonly<Record<string, string>>,
          onSome: (machine) => machine.metadata
        })
        // A daemon's --org comes with every registration: the organization alone names where the
        // machine is, and a machine registered again there keeps its metadata.
        const given = input.metadata === undefined ? [] : Object.keys(input.metadata)
        const organizationAlone = given.length === 1 && given[0] === ORG_METADATA_KEY
        const metadata = input.metadata === undefined || (organizationAlone && Option.isSome(previous)) ? kept : input.metadata
        return factsOf(input, metadata, registrant.credentialId)
      }
      const machine = yield* transaction(Effect.gen(function*() {
        // Read under the machine's lock, which a delete takes first: a delete that came before
        // leaves no machine here (a new one is registered, as for a deleted machine_id), and one
        // that comes after waits for this registration. Read without it, the machine could be
        // deleted before its update, which then found no row (a 500).
        const previous = input.machine_id === undefined || input.machine_id === null
          ? Option.none<StoredMachine>()
          : Option.filter(
            yield* machines.findById(input.machine_id, "update"),
            (machine) => machine.org_id === orgId && machine.owner_user_id === ownerUserId
          )
        const saved = Option.isSome(previous)
          ? machines.reregister(previous.value.id, facts(previous))
          : Effect.flatMap(ids.make(MachineId), (id) =>
            machines.insert({ id, org_id: orgId, owner_user_id: ownerUserId, ...facts(previous) }))
        return yield* saved.pipe(replaceFailure("UniqueViolation", nameTaken(input.machine_name, ownerUserId !== null), "Debug"))
      }))
      return yield* registered(machine, registrant.credentialId)
    })

  return {
    list,
    get,
    update,
    remove,
    createGrant,
    listGrants,
    removeGrant,
    register,
    poolRegistrant,
    visible,
    manageable
  } as const
})

export class Machines extends Context.Service<Machines, Effect.Success<typeof make>>()("Machines") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      MachinesRepository.layer,
      MachineGrantsRepository.layer,
      MachineRequestsRepository.layer,
      Grants.layer,
      Access.layer,
      MembersRepository.layer,
      IdGenerator.layer,
      MachineTokens.layer,
      MachineHub.layer,
      PoolMachines.layer,
      Transactions.layer
    ])
  )
}
