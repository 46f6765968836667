/**
 * What a machine pool's provider does for provisioning (docs/machine-pools.md, "Provisioning"):
 * start a machine that runs the platform's daemon, stop one, and list the machines it runs at this
 * process's location (start-up reconciliation). Every provider implements this one interface; the
 * pool machinery (PoolMachines) never knows which one it talks to.
 *
 * A started machine runs the daemon (`src/daemon/main.ts`, the arguments from DaemonLaunch.ts) with the
 * environment of `MachineLaunch.env`, which carries the machine's registration token in
 * AGENT_PLATFORM_DAEMON_TOKEN; the daemon registers as the machine row `machineId` and connects.
 */
import { type Option, Schema } from "effect"
import type { ProviderObject } from "../../../domain/machines/MachinePools.ts"
import type { MachineId } from "../../../domain/shared/Ids.ts"
import { storableText } from "../../../domain/shared/StorableText.ts"
import type { Effect } from "effect"

/** The provider refused or failed to start, stop or list machines; `details` says why, for people. */
export class ProviderFailed extends Schema.TaggedError<ProviderFailed>()("ProviderFailed", {
  details: Schema.String
}) {
  override get message() {
    return this.details
  }
}

/** The pool settings a provider acts on. */
export interface ProviderPool {
  readonly poolId: string
  readonly providerConfig: ProviderObject
  /** The value of the pool's auth secret (docker: the credential document; local: the operator's key). */
  readonly authSecret: string
}

/** One machine to start. */
export interface MachineLaunch {
  readonly machineId: MachineId
  /** CPUs (docker: NanoCpus = cpu × 1e9); null when the provider refuses CPU fields. */
  readonly cpu: number | null
  readonly memoryMb: number | null
  /** The pool's default options with the source's overlay applied (docker: `image`). */
  readonly providerOptions: ProviderObject
  /** The whole environment of the daemon: the pool's env, its secret env resolved, the daemon token. */
  readonly env: Readonly<Record<string, string>>
  /** The arguments to `node` that run the daemon (DaemonLaunch.ts); the provider picks the `node` binary. */
  readonly nodeArguments: ReadonlyArray<string>
}

/** A machine the provider runs at this process's location, as `list` reports it. */
export interface ProviderMachine {
  readonly machineId: MachineId
  /** The provider's own handle (a container id, a process id). */
  readonly ref: string
  readonly running: boolean
}

export interface MachineProvider {
  /**
   * Why the provider would not start a machine of this pool now, though the pool was accepted
   * when it was made (the `local` provider: the operator's key unset or no longer in the secret).
   */
  readonly refusal: (pool: ProviderPool) => Option.Option<string>
  /**
   * Where this process starts the machines of a pool with this `provider_config`, recorded on each
   * machine it starts: the processes of one location see the same machines through `list`, and
   * only they judge whether one has ended, and stop it (docs/scale-out.md, "Pool machines"). Two
   * processes on different hosts (or with different data directories) list different machines.
   */
  readonly location: (providerConfig: ProviderObject) => string
  /** Where the daemon of this machine works (its `--dir`, holding its state file), as the machine sees it. */
  readonly workDirectory: (poolId: string, machineId: MachineId) => string
  /** Starts the machine; answers the provider's handle. Starting an id that runs already replaces it. */
  readonly start: (pool: ProviderPool, launch: MachineLaunch) => Effect.Effect<string, ProviderFailed>
  /** Stops and removes the machine; a machine that is gone already is fine. */
  readonly stop: (pool: ProviderPool, machineId: MachineId, ref: string | null) => Effect.Effect<void, ProviderFailed>
  /** The machines of this pool the provider runs at this process's `location`, whichever process started them there. */
  readonly list: (pool: ProviderPool) => Effect.Effect<ReadonlyArray<ProviderMachine>, ProviderFailed>
  /**
   * How a machine that `list` reports as not running ended, for people: its exit status and the
   * last lines of its output (`describeEnding`). `ref` is `list`'s.
   */
  readonly ending: (pool: ProviderPool, machineId: MachineId, ref: string) => Effect.Effect<string, ProviderFailed>
}

/** How many of a machine's last output lines its ending quotes, and at most how many characters. */
const ENDING_LINES = 8
const ENDING_CHARACTERS = 1000

/**
 * `status` ("exited with code 1"), with the last lines of the machine's `output` that say
 * something: blank lines, stack frames and Node's version banner left out, so that an uncaught
 * error's message is among them. The output (and the status, which Docker words) is text from
 * outside: a NUL in it, or the half of a pair the cut leaves, is U+FFFD (storableText), so that
 * the machine's row and its calls' results can keep it.
 */
export const describeEnding = (status: string, output: string) => {
  const telling = output.split(/\r?\n/).filter((line) => line.trim() !== "" && !/^\s+at /.test(line) && !/^Node\.js v\d/.test(line))
  const told = telling.slice(-ENDING_LINES).map((line) => line.trimEnd()).join("\n")
  return storableText(
    told === ""
      ? `${status}, with no output`
      : `${status}; its output ended with:\n${told.length > ENDING_CHARACTERS ? `…${told.slice(-ENDING_CHARACTERS)}` : told}`
  )
}
