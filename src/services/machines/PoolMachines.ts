/**
 * Machines from pools (docs/machine-pools.md, "Provisioning"). A built-in call of an agent whose
 * config names a pool is stored unassigned; `admit` (run by PoolScheduler on every process, one
 * pool at a time under the pool's row lock) gives it a machine of the agent's: a free one, else a
 * new one while the source's `max_machines` and the pool's totals allow, else the agent's busiest
 * one to queue on; with none of those it waits, and fails with `managed_work_admission_denied`
 * after AGENT_PLATFORM_POOL_ADMISSION_WAIT_SECONDS. A new machine is a `provisioning` row with a
 * registration token of its own, started by the pool's provider once the row is committed; its
 * daemon registers with the token (`running`) and receives the requests assigned to it. Idle
 * machines, machines whose daemon stopped answering (runtime protection) and machines whose daemon
 * never registered become `deleting` (PoolSweep); `destroy` stops them at the provider and marks
 * them `deleted`.
 * Each machine records its provider's location for the process that started it (a host's own
 * directory or Docker socket): only the processes of that location see it at the provider, so only
 * they judge whether it has ended and stop it (docs/scale-out.md, "Pool machines"). At start-up
 * PoolReconciliation makes each pool's machines agree with its provider.
 */
import { Context, Duration, Effect, FiberSet, Layer, Option, Schedule } from "effect"
import type { CompiledAgentConfig, CompiledMachineSource } from "../../domain/configuration/agent-config/Compiled.ts"
import type { Outcome } from "../../domain/machines/DaemonProtocol.ts"
import { machineTargetOf, poolSourceOf } from "../../domain/machines/MachineTarget.ts"
import { fits, requestDefaults, type Size, sizeOf, type Usage, usageOf } from "../../domain/machines/PoolAdmission.ts"
import type { OperationFailureCode } from "../../domain/machines/OperationFailure.ts"
import { type AgentId, MachineId, type MachinePoolId } from "../../domain/shared/Ids.ts"
import { AgentConfigsRepository } from "../configuration/AgentConfigsRepository.ts"
import { AgentsRepository } from "../runtime/AgentsRepository.ts"
import { newBearerToken } from "../shared/BearerTokens.ts"
import { sha256Hex } from "../shared/Hash.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { ListenAddress } from "../shared/ListenAddress.ts"
import { Transactions } from "../shared/Transactions.ts"
import { MachineHub } from "./MachineHub.ts"
import { MachinePoolsRepository, type StoredPool } from "./MachinePoolsRepository.ts"
import { MachineRequestsRepository, type StoredRequest } from "./MachineRequestsRepository.ts"
import { MachineResults } from "./MachineResults.ts"
import { MachinesRepository } from "./MachinesRepository.ts"
import { PoolProviders } from "./PoolProviders.ts"
import { daemonArguments } from "./providers/DaemonLaunch.ts"
import { ProviderFailed } from "./providers/MachineProvider.ts"
import type { StoredMachine } from "./StoredMachine.ts"

/** The prefix of the token a pool machine's daemon registers with (that machine only, until it is deleted). */
export const POOL_MACHINE_TOKEN_PREFIX = "mpt_"

/** How long a pool machine's daemon has to register after it was started. */
export const PROVISIONING_TIMEOUT_SECONDS = 120

/** How long one call to a provider may take. */
const PROVIDER_TIMEOUT = Duration.seconds(60)

/**
 * How long a `deleting` machine of another location is left to the processes of its location
 * (their sweep stops it within seconds) before any process marks it `deleted` without stopping
 * it: its location has no process left (a host gone), and the machine must stop holding its
 * pool's room. Should its host come back, its start-up reconciliation stops what is left.
 */
const LOCATION_HANDOVER_SECONDS = 60

/** How long a pool's deletion waits for the processes of other locations to stop their machines of it (a sweep or two). */
const ELSEWHERE_WAIT = Duration.seconds(15)

const failed = (code: OperationFailureCode, message: string): Outcome => ({ outcome: "failed", error: { code, message } })

/** A machine row made in a transaction, to start at the provider once committed. */
interface Launch {
  readonly machine: StoredMachine
  readonly token: string
  readonly source: CompiledMachineSource
}

/** What admission decided that is carried out once its transaction has committed. */
interface AdmissionOutcomes {
  readonly refused: Array<{ readonly requestId: string; readonly outcome: Outcome }>
  readonly assigned: Set<MachineId>
}

/** A locked pool's machines and room as admission gives them out, call after call (inside its transaction). */
interface PoolRoom {
  readonly pool: StoredPool
  readonly usage: Usage
  readonly live: Array<StoredMachine>
  readonly busy: Set<MachineId>
  readonly sources: Map<AgentId, CompiledMachineSource | undefined>
  readonly launches: Array<Launch>
}

/** Counts one more machine of `size` in `usage`. */
const addMachine = (usage: Usage, size: Size) => {
  usage.machines += 1
  usage.cpu += size.cpu ?? 0
  usage.memoryMb += size.memoryMb ?? 0
}

const make = Effect.gen(function*() {
  const machines = yield* MachinesRepository
  const requests = yield* MachineRequestsRepository
  const pools = yield* MachinePoolsRepository
  const agents = yield* AgentsRepository
  const configs = yield* AgentConfigsRepository
  const results = yield* MachineResults
  const hub = yield* MachineHub
  const address = yield* ListenAddress
  const ids = yield* IdGenerator
  const { transaction } = yield* Transactions
  const { locationOf, providerOf, providerPoolOf, revealed, startedHere } = yield* PoolProviders
  /** Machines being started at their provider (outliving the call that made them). */
  const starting = yield* FiberSet.make()

  /** The agent's source naming the pool, if its config (still) names it. */
  const sourceOf = (agentId: AgentId, poolId: MachinePoolId) =>
    Effect.gen(function*() {
      const agent = yield* agents.findById(agentId)
      if (Option.isNone(agent)) return undefined
      const compiled = yield* configs.compiledDefinition(agent.value.agent_config_id)
      return Option.isNone(compiled) ? undefined : poolSourceOf(compiled.value, poolId)
    })

  /** A `provisioning` machine row for the agent (inside the caller's transaction). */
  const newMachine = (pool: StoredPool, agentId: AgentId, source: CompiledMachineSource, size: Size) =>
    Effect.gen(function*() {
      const id = yield* ids.make(MachineId)
      const token = newBearerToken(POOL_MACHINE_TOKEN_PREFIX)
      const machine = yield* machines.insertPoolMachine({
        id,
        org_id: pool.org_id,
        machine_pool_id: pool.id,
        // Cut by characters, not UTF-16 units: a name cut inside an emoji would not be storable text.
        agent_id: agentId,
        name: `${[...pool.name].slice(0, 55).join("")}-${id.slice(-8)}`,
        cpu: size.cpu,
        memory_mb: size.memoryMb,
        delete_after_idle_minutes: source.delete_after_idle_minutes ?? pool.delete_after_idle_minutes,
        registration_token_hash: sha256Hex(token),
        // This process starts it (startAll, once committed), so it lives at this process's location.
        provider_location: locationOf(pool)
      })
      return { machine, token, source } satisfies Launch
    })

  /** Fails the unfinished requests of a machine that will not run them, with `message`. */
  const failPending = (machineId: MachineId, message: string) =>
    Effect.flatMap(requests.pendingOf(machineId), (pending) =>
      Effect.forEach(pending, (request) => results.complete(request.request_id, failed("upstream_unavailable", message)), {
        discard: true
      }))

  /** Starts a new machine at the pool's provider; a failure deletes the machine, and its calls fail at once saying why. */
  const start = (pool: StoredPool, launch: Launch) =>
    Effect.gen(function*() {
      const provider = providerOf(pool)
      const providerPool = yield* providerPoolOf(pool)
      const refusal = provider.refusal(providerPool)
      if (Option.isSome(refusal)) return yield* Effect.fail(new ProviderFailed({ details: refusal.value }))
      const secretEnv: Record<string, string> = {}
      for (const [name, secretId] of Object.entries(pool.default_machine_secret_env)) {
        secretEnv[name] = yield* revealed(secretId)
      }
      const machineId = launch.machine.id
      const nodeArguments = daemonArguments({
        server: yield* address.url,
        machineId,
        name: launch.machine.name,
        workDirectory: provider.workDirectory(pool.id, machineId)
      })
      const ref = yield* provider.start(providerPool, {
        machineId,
        cpu: launch.machine.cpu,
        memoryMb: launch.machine.memory_mb,
        providerOptions: { ...pool.default_machine_provider_options, ...launch.source.machine_provider_options_overlay },
        env: { ...pool.default_machine_env, ...secretEnv, AGENT_PLATFORM_DAEMON_TOKEN: launch.token },
        nodeArguments
      }).pipe(Effect.timeoutOrElse({
        duration: PROVIDER_TIMEOUT,
        orElse: () => Effect.fail(new ProviderFailed({ details: `the provider did not start machine ${machineId} within 60 s` }))
      }))
      yield* machines.setProviderRef(machineId, ref)
    }).pipe(
      Effect.catch((failure) =>
        Effect.gen(function*() {
          const machineId = launch.machine.id
          const why = `the provider failed to start it: ${failure.details}`
          yield* Effect.logWarning(`starting pool machine ${machineId} failed: ${failure.details}`)
          const marked = yield* machines.setPoolState(machineId, ["provisioning"], "deleting", why)
          // Its calls fail now, not once the provider has removed it: a provider out of reach
          // (its Docker daemon down) would keep them waiting for as long as it stays so.
          if (Option.isSome(marked)) yield* failPending(machineId, `Pool machine ${machineId} did not start (${why})`)
        })
      )
    )

  const startAll = (pool: StoredPool, launches: ReadonlyArray<Launch>) =>
    Effect.forEach(launches, (launch) => FiberSet.run(starting, start(pool, launch)), { discard: true })

  /**
   * Gives `request` a free machine of its agent's, else a new one within the limits, else one of
   * its agent's busy ones to queue on; with none it waits. A cancelled call, or one whose agent's
   * config no longer names the pool or asks for a size the pool never gives, is refused.
   */
  const admitRequest = (room: PoolRoom, outcomes: AdmissionOutcomes, request: StoredRequest) =>
    Effect.gen(function*() {
      const { busy, launches, live, pool, sources, usage } = room
      const refuse = (outcome: Outcome) => outcomes.refused.push({ requestId: request.request_id, outcome })
      const agentId = request.agent_id
      if (request.cancel_requested || agentId === null) {
        refuse(failed("cancelled", "The call was cancelled before a machine ran it"))
        return
      }
      if (!sources.has(agentId)) sources.set(agentId, yield* sourceOf(agentId, pool.id))
      const source = sources.get(agentId)
      if (source === undefined) {
        refuse(failed("managed_work_admission_denied", `The agent's config no longer names machine pool ${pool.id}`))
        return
      }
      const assign = (machine: StoredMachine) =>
        Effect.map(requests.assign(request.request_id, machine.id, requestDefaults(pool, source)), () => {
          busy.add(machine.id)
          outcomes.assigned.add(machine.id)
        })
      const mine = live.filter((machine) => machine.agent_id === agentId)
      const free = mine.find((machine) => !busy.has(machine.id))
      if (free !== undefined) return yield* assign(free)
      const size = sizeOf(pool, source)
      if (typeof size === "string") {
        refuse(failed("managed_work_admission_denied", `The agent's machine source asks for ${size} in machine pool ${pool.name}`))
        return
      }
      if (mine.length < (source.max_machines ?? 1) && fits(pool, usage, size)) {
        const launch = yield* newMachine(pool, agentId, source, size)
        launches.push(launch)
        live.push(launch.machine)
        addMachine(usage, size)
        yield* assign(launch.machine)
      } else if (mine.length > 0) {
        yield* assign(mine[0])
      }
      // else: it waits for the pool to have room.
    })

  /**
   * Admission's decisions under the pool's row lock (inside its transaction): the pool and the
   * machines to start once committed, or none when the pool was deleted (its calls are refused).
   */
  const decideAdmission = (poolId: MachinePoolId, outcomes: AdmissionOutcomes) =>
    Effect.gen(function*() {
      const found = yield* pools.findById(poolId, "update")
      const waiting = yield* requests.unassigned(poolId)
      if (Option.isNone(found)) {
        for (const request of waiting) {
          outcomes.refused.push({
            requestId: request.request_id,
            outcome: failed("upstream_unavailable", `Machine pool ${poolId} was deleted`)
          })
        }
        return Option.none<readonly [StoredPool, ReadonlyArray<Launch>]>()
      }
      const pool = found.value
      const held = yield* machines.poolMachines(poolId, ["provisioning", "running", "deleting"])
      const live = held.filter((machine) => machine.pool_state !== "deleting")
      const room: PoolRoom = {
        pool,
        usage: usageOf(held),
        live,
        busy: new Set(live.filter((machine) => machine.busy).map((machine) => machine.id)),
        sources: new Map(),
        launches: []
      }
      for (const request of waiting) yield* admitRequest(room, outcomes, request)
      return Option.some([pool, room.launches] as const)
    })

  /** Gives the pool's waiting requests machines, within its limits (docs/machine-pools.md, "Admission"). */
  const admit = (poolId: MachinePoolId) =>
    Effect.gen(function*() {
      const outcomes: AdmissionOutcomes = { refused: [], assigned: new Set() }
      const decided = yield* transaction(decideAdmission(poolId, outcomes))
      yield* Effect.forEach(outcomes.refused, ({ outcome, requestId }) => results.complete(requestId, outcome), { discard: true })
      if (Option.isSome(decided)) yield* startAll(...decided.value)
      if (outcomes.assigned.size > 0) yield* hub.wake(outcomes.assigned)
    })

  /** At an agent's launch: the `initial_num_machines` of its pool source, as far as the pool's limits allow. */
  const provisionInitial = (agentId: AgentId, compiled: CompiledAgentConfig) =>
    Effect.gen(function*() {
      const target = machineTargetOf(compiled)
      if (target === null || target.place._tag !== "Pool") return
      const poolId = target.place.poolId
      const source = poolSourceOf(compiled, poolId)
      const wanted = Math.min(source?.initial_num_machines ?? 0, source?.max_machines ?? Number.MAX_SAFE_INTEGER)
      if (source === undefined || wanted <= 0) return
      const decided = yield* transaction(Effect.gen(function*() {
        const found = yield* pools.findById(poolId, "update")
        if (Option.isNone(found)) return Option.none<readonly [StoredPool, ReadonlyArray<Launch>]>()
        const pool = found.value
        const size = sizeOf(pool, source)
        const usage = usageOf(yield* machines.poolMachines(poolId, ["provisioning", "running", "deleting"]))
        const launches: Array<Launch> = []
        while (typeof size !== "string" && launches.length < wanted && fits(pool, usage, size)) {
          launches.push(yield* newMachine(pool, agentId, source, size))
          addMachine(usage, size)
        }
        if (launches.length < wanted) {
          yield* Effect.logWarning(
            `agent ${agentId}: ${launches.length} of its ${wanted} initial machines fit in machine pool ${pool.name}`
          )
        }
        return Option.some([pool, launches] as const)
      }))
      if (Option.isSome(decided)) yield* startAll(...decided.value)
    })

  /**
   * Stops a `deleting` machine at its provider and marks it `deleted`; its unfinished requests
   * fail. A machine of another location is left to the processes there (this process's provider
   * would stop nothing, or another host's container of the same name) until it has been
   * `deleting` for LOCATION_HANDOVER_SECONDS; then it is marked `deleted` without being stopped.
   */
  const destroy = (machine: StoredMachine) =>
    Effect.gen(function*() {
      const pool = machine.machine_pool_id === null ? Option.none() : yield* pools.findById(machine.machine_pool_id)
      const here = Option.isNone(pool) || startedHere(pool.value)(machine)
      if (Option.isSome(pool) && here) {
        const providerPool = yield* providerPoolOf(pool.value)
        yield* providerOf(pool.value).stop(providerPool, machine.id, machine.provider_ref)
      }
      const deleted = here
        ? yield* machines.setPoolState(machine.id, ["deleting"], "deleted")
        : yield* machines.settleDeleting(machine.id, LOCATION_HANDOVER_SECONDS)
      if (Option.isNone(deleted)) return
      if (!here) {
        yield* Effect.logWarning(
          `pool machine ${machine.id} at ${machine.provider_location} was not stopped there within ` +
            `${LOCATION_HANDOVER_SECONDS} s (no server process left at that location?): marked deleted without stopping it`
        )
      }
      yield* hub.machineDeleted(machine.id)
      const why = deleted.value.failure ?? "deleted"
      yield* failPending(machine.id, `Pool machine ${machine.id} was deleted (${why}) before this finished`)
    }).pipe(
      Effect.catch((failure) => Effect.logWarning(`deleting pool machine ${machine.id} failed; trying again later: ${failure.details}`))
    )

  /**
   * A pool machine its work no longer needs, marked `deleting` (inside the caller's transaction,
   * with the change that lets it go), for `destroy` to stop once that has committed. A machine
   * with a tool call running is left as it is (the pool's idle deletion takes it later): none.
   */
  const markReleased = (machineId: MachineId, why: string) =>
    Effect.flatMap(
      requests.toolCallRunningOn(machineId),
      (running) =>
        running
          ? Effect.succeedNone
          : machines.setPoolState(machineId, ["provisioning", "running"], "deleting", why)
    )

  /**
   * A pool machine its work no longer needs (a failed migration's, docs/workspaces.md): marked
   * `deleting` and stopped at its provider at once, as `DELETE /machines/{id}` does; whether it
   * was released (`markReleased`).
   */
  const release = (machineId: MachineId, why: string) =>
    Effect.gen(function*() {
      const marked = yield* transaction(markReleased(machineId, why))
      if (Option.isNone(marked)) return false
      yield* destroy(marked.value)
      return true
    })

  /**
   * Marks the pool's provisioning and running machines `deleting` (those `which` picks), saying
   * why (inside the caller's transaction).
   */
  const markPoolDeleting = (poolId: MachinePoolId, why: string, which: (machine: StoredMachine) => boolean = () => true) =>
    Effect.flatMap(machines.poolMachines(poolId, ["provisioning", "running"]), (live) =>
      Effect.forEach(
        live.filter(which),
        (machine) => machines.setPoolState(machine.id, ["provisioning", "running"], "deleting", why),
        { discard: true }
      ))

  /**
   * Deletes the pool's `deleting` machines at its provider; how many are left (their provider
   * failed). Those of other locations are stopped by the processes there: their sweeps are waited
   * for (at most ELSEWHERE_WAIT), since the pool's row, which a stop needs, goes after this.
   */
  const destroyPoolDeleting = (poolId: MachinePoolId) =>
    Effect.gen(function*() {
      const deleting = machines.poolMachines(poolId, ["deleting"])
      yield* Effect.forEach(yield* deleting, destroy, { concurrency: 4, discard: true })
      const pool = yield* pools.findById(poolId)
      if (Option.isSome(pool)) {
        const here = startedHere(pool.value)
        yield* deleting.pipe(Effect.repeat({
          schedule: Schedule.spaced("500 millis").pipe(Schedule.upTo({ duration: ELSEWHERE_WAIT })),
          while: (left) => left.some((machine) => !here(machine))
        }))
      }
      return (yield* deleting).length
    })

  /**
   * Starts a `provisioning` machine of `agentId`'s again, with a new registration token: its
   * provider does not run it (the server stopped before starting it).
   */
  const startAgain = (pool: StoredPool, machine: StoredMachine, agentId: AgentId) =>
    Effect.gen(function*() {
      const token = newBearerToken(POOL_MACHINE_TOKEN_PREFIX)
      yield* machines.renewRegistrationToken(machine.id, sha256Hex(token))
      const source = yield* sourceOf(agentId, pool.id)
      yield* startAll(pool, [{ machine, token, source: source ?? {} }])
    })

  return { admit, provisionInitial, startAgain, destroy, markReleased, release, markPoolDeleting, destroyPoolDeleting } as const
})

export class PoolMachines extends Context.Service<PoolMachines, Effect.Success<typeof make>>()("PoolMachines") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      MachinesRepository.layer,
      MachineRequestsRepository.layer,
      MachinePoolsRepository.layer,
      AgentsRepository.layer,
      AgentConfigsRepository.layer,
      PoolProviders.layer,
      MachineResults.layer,
      MachineHub.layer,
      ListenAddress.layer,
      IdGenerator.layer,
      Transactions.layer
    ])
  )
}
