/**
 * The sandboxes of REMOTE worktrees (docs/workspaces.md, "Leaving a sandbox"): the machine a
 * workspace's pool starts for a migration's agent, given back to the pool when the migration
 * fails, and the sandbox a worktree leaves with its work packed, given back once the move is
 * recorded.
 */
import { Context, Effect, Layer, Option, Schedule } from "effect"
import { ServiceUnavailable } from "../../domain/shared/Errors.ts"
import type { AgentId, MachinePoolId } from "../../domain/shared/Ids.ts"
import { MachinesRepository } from "../machines/MachinesRepository.ts"
import { PoolMachines, PROVISIONING_TIMEOUT_SECONDS } from "../machines/PoolMachines.ts"
import type { StoredMachine } from "../machines/StoredMachine.ts"
import { someOrFail } from "../shared/Failures.ts"
import type { StoredWorktree } from "./WorktreesRepository.ts"

const make = Effect.gen(function*() {
  const machines = yield* MachinesRepository
  const poolMachines = yield* PoolMachines

  /**
   * The sandbox a worktree leaves (`packedOn`, the machine its work was just packed on, when a
   * pool's), marked `deleting` in the transaction that moves the worktree, so that a server
   * stopped after the move never leaves it counted against its pool (its sweep stops `deleting`
   * machines); `stopLeft` stops it once that transaction has committed.
   */
  const leaveSandbox = (worktree: StoredWorktree, packedOn: Option.Option<StoredMachine>) =>
    Option.match(Option.filter(packedOn, (machine) => machine.machine_pool_id !== null), {
      onNone: () => Effect.succeedNone,
      onSome: (machine) =>
        Effect.tap(
          poolMachines.markReleased(machine.id, `worktree ${worktree.id} was migrated away from it`),
          (marked) =>
            Option.isNone(marked)
              ? Effect.logWarning(`sandbox ${machine.id} of worktree ${worktree.id} runs a tool call: left to its pool`)
              : Effect.void
        )
    })

  /** Stops the sandbox `leaveSandbox` marked, if it did (a failure is logged; the pool's sweep tries again). */
  const stopLeft = (left: Option.Option<StoredMachine>) =>
    Option.match(left, { onNone: () => Effect.void, onSome: poolMachines.destroy })

  /** The pool machines started for an agent whose migration failed, given back to the pool. */
  const releaseAgentMachines = (poolId: MachinePoolId, agentId: AgentId) =>
    Effect.flatMap(machines.poolMachines(poolId, ["provisioning", "running"]), (started) =>
      Effect.forEach(
        started.filter((machine) => machine.agent_id === agentId),
        (machine) => poolMachines.release(machine.id, "the worktree migration it was started for failed"),
        { discard: true }
      )).pipe(
        Effect.catchCause((cause) => Effect.logWarning(`releasing the machines of agent ${agentId} failed`, cause))
      )

  /** The pool machine the pool started for the agent, once its daemon is connected. */
  const poolMachineOf = (poolId: MachinePoolId, agentId: AgentId) =>
    machines.poolMachines(poolId, ["running"]).pipe(
      Effect.map((running) => Option.fromNullishOr(running.find((machine) => machine.agent_id === agentId && machine.online))),
      Effect.repeat({ schedule: Schedule.spaced("500 millis"), until: Option.isSome }),
      Effect.timeoutOrElse({
        duration: `${PROVISIONING_TIMEOUT_SECONDS} seconds`,
        orElse: () => Effect.succeed(Option.none<StoredMachine>())
      }),
      someOrFail(() =>
        new ServiceUnavailable({
          error: `The machine pool ${poolId} started no machine for the worktree within ${PROVISIONING_TIMEOUT_SECONDS} s`
        })
      )
    )

  return { poolMachineOf, releaseAgentMachines, leaveSandbox, stopLeft } as const
})

export class WorktreeSandboxes extends Context.Service<WorktreeSandboxes, Effect.Success<typeof make>>()("WorktreeSandboxes") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      MachinesRepository.layer,
      PoolMachines.layer
    ])
  )
}
