/**
 * The `docker` machine provider (docs/machine-pools.md, "Docker provider"): a pool machine is a
 * container on the pool's Docker host (`provider_config.host`), named `agent-platform-<machine id>`,
 * labelled with its pool and machine, running `node` with the daemon's arguments from a read-only
 * mount of the project at its own path, on the host's network, with the machine's CPU and memory as
 * the container's limits. Every Docker failure is a ProviderFailed saying which step failed and
 * Docker's own message. With DATA_DIR `memory://` the server keeps nothing on disk, so nothing it
 * starts outlives it: when it stops, the containers it started and did not stop are removed.
 */
import { Context, Duration, Effect, Layer, Option, Schema } from "effect"
import type { LookupFunction } from "node:net"
import { hostname } from "node:os"
import { dockerHostOf, type ProviderObject } from "../../../domain/machines/MachinePools.ts"
import { MachineId } from "../../../domain/shared/Ids.ts"
import { AppConfig } from "../../../layers/AppConfig.ts"
import { NetworkPolicy } from "../../shared/NetworkPolicy.ts"
import { PROJECT_ROOT } from "./DaemonLaunch.ts"
import { type DockerAnswer, dockerMessage, type DockerRequest, dockerRequest } from "./DockerEngine.ts"
import {
  describeEnding,
  type MachineLaunch,
  type MachineProvider,
  type ProviderMachine,
  ProviderFailed,
  type ProviderPool
} from "./MachineProvider.ts"

/** The label naming a container's pool. */
export const POOL_LABEL = "agent-platform.pool"
/** The label naming a container's machine. */
export const MACHINE_LABEL = "agent-platform.machine"

/** The daemon's directory inside every container (Docker makes it). */
export const WORK_DIRECTORY = "/workspace"

/** The container of machine `machineId`. */
export const containerName = (machineId: MachineId) => `agent-platform-${machineId}`

/** Creating, starting and removing a container copy or delete its file system (slow on the vfs driver). */
const CONTAINER_TIMEOUT = Duration.seconds(60)
const LIST_TIMEOUT = Duration.seconds(15)

const Created = Schema.Struct({ Id: Schema.String })
const Listed = Schema.Array(Schema.Struct({
  Id: Schema.String,
  State: Schema.optional(Schema.String),
  Labels: Schema.optional(Schema.NullOr(Schema.Record(Schema.String, Schema.String)))
}))
const Inspected = Schema.Struct({
  State: Schema.Struct({
    Status: Schema.String,
    ExitCode: Schema.optional(Schema.Int),
    OOMKilled: Schema.optional(Schema.Boolean),
    Error: Schema.optional(Schema.String)
  })
})
const isMachineId = Schema.is(MachineId)

/** How many lines of a container's log its ending reads. */
const ENDING_LOG_LINES = 50

/**
 * The text of a container's log: without a TTY Docker frames stdout and stderr in chunks, each
 * after an 8-byte header (the stream, three zero bytes, the chunk's length); with one it is raw.
 */
const logText = (bytes: Uint8Array) => {
  const chunks: Array<Uint8Array> = []
  let at = 0
  while (at + 8 <= bytes.length && bytes[at] <= 2 && bytes[at + 1] === 0 && bytes[at + 2] === 0 && bytes[at + 3] === 0) {
    const size = new DataView(bytes.buffer, bytes.byteOffset + at + 4, 4).getUint32(0)
    chunks.push(bytes.subarray(at + 8, at + 8 + size))
    at += 8 + size
  }
  return new TextDecoder().decode(at === 0 ? bytes : Buffer.concat(chunks))
}

const failed = (details: string) => Effect.fail(new ProviderFailed({ details }))

/**
 * Where a pool's containers are: a `tcp://` Docker host is the same for every process that names
 * it; a unix socket is the Docker Engine of the process's own host.
 */
const locationOf = (config: ProviderObject) => {
  const host = dockerHostOf(config)
  return host.startsWith("tcp://") ? `docker:${host}` : `docker:${hostname()}:${host}`
}

/** Requests to a pool's Docker host; `lookup` guards the connections to tcp:// hosts (NetworkPolicy's). */
const dockerClient = (lookup: LookupFunction | undefined) => {
  /** One request to the pool's Docker host; an unreachable host fails saying which step it was for. */
  const send = (pool: ProviderPool, step: string, request: Omit<DockerRequest, "lookup">) => {
    const host = dockerHostOf(pool.providerConfig)
    return dockerRequest(host, { ...request, lookup }).pipe(
      Effect.catchTag("DockerUnreachable", (unreachable) => failed(`${step}: ${unreachable.details}`))
    )
  }

  const refused = (step: string, answer: DockerAnswer) =>
    failed(`${step}: Docker answered ${answer.status}: ${dockerMessage(answer.text)}`)

  /** Removes a container (and its anonymous volumes), running or not; one that is gone is fine. */
  const remove = (pool: ProviderPool, reference: string, step: string) =>
    Effect.gen(function*() {
      const answer = yield* send(pool, step, {
        method: "DELETE",
        path: `/containers/${encodeURIComponent(reference)}?force=true&v=true`,
        timeout: CONTAINER_TIMEOUT
      })
      // 404: gone already; 409: Docker is removing it already.
      if (answer.status === 204 || answer.status === 404) return
      if (answer.status === 409 && /already in progress/i.test(dockerMessage(answer.text))) return
      return yield* refused(step, answer)
    })

  return { send, refused, remove } as const
}

type DockerClient = ReturnType<typeof dockerClient>

/** The body of the request creating the container of `launch`. */
const containerSpec = (pool: ProviderPool, launch: MachineLaunch, image: string) => ({
  Image: image,
  Cmd: ["node", ...launch.nodeArguments],
  Env: Object.entries(launch.env).map(([key, value]) => `${key}=${value}`),
  WorkingDir: WORK_DIRECTORY,
  Labels: { [POOL_LABEL]: pool.poolId, [MACHINE_LABEL]: launch.machineId },
  HostConfig: {
    NetworkMode: "host",
    ...(launch.cpu === null ? {} : { NanoCpus: Math.round(launch.cpu * 1e9) }),
    ...(launch.memoryMb === null ? {} : { Memory: launch.memoryMb * 1024 * 1024 }),
    Binds: [`${PROJECT_ROOT}:${PROJECT_ROOT}:ro`],
    RestartPolicy: { Name: "no" },
    // Docker's init as pid 1: it reaps what commands leave behind (node would not) and passes signals on.
    Init: true
  }
})

/** Creates the container of `launch` (replacing an earlier one of the same name); its id. */
const createContainer = (docker: DockerClient, pool: ProviderPool, launch: MachineLaunch, image: string) =>
  Effect.gen(function*() {
    const name = containerName(launch.machineId)
    const createStep = `Creating container ${name} from image ${image}`
    const create = docker.send(pool, createStep, {
      method: "POST",
      path: `/containers/create?name=${encodeURIComponent(name)}`,
      body: containerSpec(pool, launch, image),
      timeout: CONTAINER_TIMEOUT
    })
    let answer = yield* create
    if (answer.status === 409) {
      // A container of that name exists (an earlier start of this machine): replace it.
      yield* docker.remove(pool, name, `Removing the earlier container ${name}`)
      answer = yield* create
    }
    if (answer.status === 404) {
      return yield* failed(`${createStep}: the image ${image} is not on the Docker host (${dockerMessage(answer.text)})`)
    }
    if (answer.status !== 201) return yield* docker.refused(createStep, answer)
    const created = yield* Schema.decodeUnknownEffect(Schema.fromJsonString(Created))(answer.text).pipe(
      Effect.mapError(() => new ProviderFailed({ details: `${createStep}: Docker answered without a container id` }))
    )
    return created.Id
  })

/** Starts the created container `id`; one that does not start is removed. */
const startContainer = (docker: DockerClient, pool: ProviderPool, name: string, id: string) =>
  Effect.gen(function*() {
    const startStep = `Starting container ${name} (${id.slice(0, 12)})`
    const started = yield* docker.send(pool, startStep, {
      method: "POST",
      path: `/containers/${id}/start`,
      timeout: CONTAINER_TIMEOUT
    })
    if (started.status !== 204 && started.status !== 304) {
      // Do not leave a created container behind that will never run.
      yield* docker.remove(pool, id, `Removing container ${name} that did not start`).pipe(Effect.ignore({
        log: "Warn",
        message: `Container ${name} did not start and could not be removed; remove it with docker rm -f ${name}`
      }))
      return yield* docker.refused(startStep, started)
    }
  })

/** A machine's container created from the pool's image and started; its id. */
const start = (docker: DockerClient, pool: ProviderPool, launch: MachineLaunch) =>
  Effect.gen(function*() {
    const image = launch.providerOptions.image
    if (typeof image !== "string" || image === "") {
      return yield* failed(`Cannot start machine ${launch.machineId}: the pool's provider options name no image`)
    }
    const id = yield* createContainer(docker, pool, launch, image)
    yield* startContainer(docker, pool, containerName(launch.machineId), id)
    return id
  })

const stop = (docker: DockerClient, pool: ProviderPool, machineId: MachineId, ref: string | null) =>
  Effect.gen(function*() {
    const name = containerName(machineId)
    if (ref !== null && ref !== name) yield* docker.remove(pool, ref, `Removing container ${name} (${ref.slice(0, 12)})`)
    yield* docker.remove(pool, name, `Removing container ${name}`)
  })

const list = (docker: DockerClient, pool: ProviderPool) =>
  Effect.gen(function*() {
    const step = `Listing the containers of pool ${pool.poolId}`
    const filters = JSON.stringify({ label: [`${POOL_LABEL}=${pool.poolId}`] })
    const answer = yield* docker.send(pool, step, {
      method: "GET",
      path: `/containers/json?all=true&filters=${encodeURIComponent(filters)}`,
      timeout: LIST_TIMEOUT
    })
    if (answer.status !== 200) return yield* docker.refused(step, answer)
    const containers = yield* Schema.decodeUnknownEffect(Schema.fromJsonString(Listed))(answer.text).pipe(
      Effect.mapError(() => new ProviderFailed({ details: `${step}: Docker answered with no container list` }))
    )
    const machines: Array<ProviderMachine> = []
    for (const container of containers) {
      const machineId = container.Labels?.[MACHINE_LABEL]
      // A container someone else labelled with the pool, without a machine of ours: not ours.
      if (machineId === undefined || !isMachineId(machineId)) continue
      machines.push({ machineId, ref: container.Id, running: container.State === "running" })
    }
    return machines
  })

/** What a container's state tells of its end. */
const describeState = ({ State }: typeof Inspected.Type) =>
  State.OOMKilled === true
    ? `its container ran out of memory and was killed (exit code ${State.ExitCode}); give its machines more memory_mb`
    : State.Status === "exited" || State.Status === "dead"
    ? `its container exited with code ${State.ExitCode}${State.Error ? ` (${State.Error})` : ""}`
    : `its container is ${State.Status}`

const ending = (docker: DockerClient, pool: ProviderPool, machineId: MachineId, ref: string) =>
  Effect.gen(function*() {
    const name = containerName(machineId)
    const inspectStep = `Inspecting container ${name}`
    const inspected = yield* docker.send(pool, inspectStep, { method: "GET", path: `/containers/${encodeURIComponent(ref)}/json` })
    if (inspected.status !== 200) return yield* docker.refused(inspectStep, inspected)
    const state = yield* Schema.decodeUnknownEffect(Schema.fromJsonString(Inspected))(inspected.text).pipe(
      Effect.mapError(() => new ProviderFailed({ details: `${inspectStep}: Docker answered without the container's state` }))
    )
    const logsStep = `Reading the log of container ${name}`
    const logs = yield* docker.send(pool, logsStep, {
      method: "GET",
      path: `/containers/${encodeURIComponent(ref)}/logs?stdout=true&stderr=true&tail=${ENDING_LOG_LINES}`
    })
    if (logs.status !== 200) return yield* docker.refused(logsStep, logs)
    return describeEnding(describeState(state), logText(logs.bytes))
  })

/** The docker provider; `lookup` guards the connections to tcp:// hosts (NetworkPolicy's). */
export const makeDockerProvider = (options: { readonly lookup?: LookupFunction | undefined } = {}): MachineProvider => {
  const docker = dockerClient(options.lookup)
  return {
    refusal: () => Option.none(),
    location: locationOf,
    workDirectory: () => WORK_DIRECTORY,
    start: (pool, launch) => start(docker, pool, launch),
    stop: (pool, machineId, ref) => stop(docker, pool, machineId, ref),
    list: (pool) => list(docker, pool),
    ending: (pool, machineId, ref) => ending(docker, pool, machineId, ref)
  }
}

/**
 * `provider`, remembering the machines it starts until they are stopped, and removing the
 * containers of those left when the scope closes (a failure is logged: the server is stopping).
 */
const removingAtClose = (provider: MachineProvider) =>
  Effect.gen(function*() {
    const started = new Map<MachineId, ProviderPool>()
    yield* Effect.addFinalizer(() =>
      Effect.forEach(started, ([machineId, pool]) =>
        provider.stop(pool, machineId, null).pipe(
          Effect.catch((error) => Effect.logWarning(`the container of machine ${machineId} was not removed: ${error.details}`))
        ), { concurrency: "unbounded", discard: true })
    )
    return {
      ...provider,
      // Remembered before the start: a start cut short may have created the container.
      start: (pool, launch) => Effect.andThen(Effect.sync(() => started.set(launch.machineId, pool)), provider.start(pool, launch)),
      stop: (pool, machineId, ref) => Effect.tap(provider.stop(pool, machineId, ref), () => Effect.sync(() => started.delete(machineId)))
    } satisfies MachineProvider
  })

const make = Effect.gen(function*() {
  const policy = yield* NetworkPolicy
  const config = yield* AppConfig
  const provider = makeDockerProvider({ lookup: policy.lookup })
  return config.dataDir.startsWith("memory://") ? yield* removingAtClose(provider) : provider
})

/** The docker provider of this server, guarded by its network policy. */
export class DockerProvider extends Context.Service<DockerProvider, Effect.Success<typeof make>>()("DockerProvider") {
  static readonly layer = Layer.effect(this, make).pipe(Layer.provide(NetworkPolicy.layer))
}
