/**
 * The docker machine provider against the real Docker Engine of this host (`.ci/run` installs and
 * starts it) and a real daemon: a container of the local test image (test/support/DockerImage.ts)
 * runs the platform's daemon from the read-only project mount, registers with the in-process test
 * server over the host network and comes online; its limits, labels and mounts are Docker's; list,
 * stop (twice), replacing a container of the same machine, how an ended container ended (its exit
 * code and the end of its log), the containers of a `memory://` server
 * removed when it stops, and the failures (an image that is not there, a host that cannot be
 * reached) are ProviderFailed saying why.
 */
import { HttpClientRequest } from "effect/http"
import { expect } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Option, Redacted, Schema, Scope } from "effect"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe } from "vitest"
import { MachineId, MachinePoolId } from "../../src/domain/shared/Ids.ts"
import { daemonArguments, PROJECT_ROOT, STATE_FILE_NAME } from "../../src/services/machines/providers/DaemonLaunch.ts"
import { dockerRequest } from "../../src/services/machines/providers/DockerEngine.ts"
import {
  containerName,
  DockerProvider,
  MACHINE_LABEL,
  makeDockerProvider,
  WORK_DIRECTORY,
  POOL_LABEL
} from "../../src/services/machines/providers/DockerProvider.ts"
import type { MachineLaunch, ProviderPool } from "../../src/services/machines/providers/MachineProvider.ts"
import { DOCKER_TEST_IMAGE } from "../support/DockerImage.ts"
import { dockerEngineAnswers, dockerPoolsRemovedAfter } from "../support/DockerEngine.ts"
import { serverUrl } from "../support/Daemons.ts"
import { eventually } from "../support/Polling.ts"
import { describeApp, newId, newUser, rawRequest, testConfig } from "../support/TestApp.ts"

const HOST = "unix:///var/run/docker.sock"

describe.runIf(dockerEngineAnswers())("the docker machine provider, on the real Docker Engine", () => {
  /** The pools the tests made: their containers are removed at the end, whatever happened. */
  const pools = dockerPoolsRemovedAfter()

  const newPool = (providerConfig: Record<string, unknown> = { host: HOST }) =>
    Effect.map(newId(MachinePoolId), (poolId): ProviderPool => {
      pools.add(poolId)
      return { poolId, providerConfig, authSecret: "unused" }
    })

  /** A launch of a small process (not the daemon), for what does not need one. */
  const sleeperLaunch = (machineId: MachineId, overrides: Partial<MachineLaunch> = {}): MachineLaunch => ({
    machineId,
    cpu: 1,
    memoryMb: 128,
    providerOptions: { image: DOCKER_TEST_IMAGE },
    env: { GREETING: "hello world", EMPTY: "" },
    nodeArguments: ["-e", "setInterval(() => {}, 1000)"],
    ...overrides
  })

  const Inspected = Schema.Struct({
    Id: Schema.String,
    Name: Schema.String,
    State: Schema.Struct({ Running: Schema.Boolean }),
    Config: Schema.Struct({
      Image: Schema.String,
      Cmd: Schema.Array(Schema.String),
      Env: Schema.Array(Schema.String),
      WorkingDir: Schema.String,
      Labels: Schema.Record(Schema.String, Schema.String)
    }),
    HostConfig: Schema.Struct({
      NetworkMode: Schema.String,
      NanoCpus: Schema.Number,
      Memory: Schema.Number,
      Binds: Schema.Array(Schema.String),
      RestartPolicy: Schema.Struct({ Name: Schema.String }),
      Init: Schema.NullOr(Schema.Boolean)
    })
  })

  /** Docker's own view of a container (GET /containers/{id}/json); none when it is gone. */
  const inspect = (reference: string) =>
    Effect.gen(function*() {
      const answer = yield* dockerRequest(HOST, { method: "GET", path: `/containers/${reference}/json` })
      if (answer.status === 404) return Option.none()
      expect(answer.status).toBe(200)
      return Option.some(yield* Schema.decodeUnknownEffect(Schema.fromJsonString(Inspected))(answer.text))
    }).pipe(Effect.orDie)

  /** A container's output, for a failing test's message. */
  const logs = (reference: string) =>
    dockerRequest(HOST, { method: "GET", path: `/containers/${reference}/logs?stdout=true&stderr=true&tail=50` }).pipe(
      // Docker multiplexes the streams with 8-byte frame headers: drop what is not printable.
      Effect.map((answer) => answer.text.replace(/[\x00-\x08\x0e-\x1f]/g, "")),
      Effect.orElseSucceed(() => "(no logs)")
    )

  describeApp()("docker machine provider", (it) => {
    it.effect("a pool machine: the daemon in a container comes online, with the limits; listed; stopped twice", () =>
      Effect.gen(function*() {
        const provider = yield* DockerProvider
        const owner = yield* newUser("docker")
        const org = yield* owner.client.organizations.create({ payload: { name: "Docker" } })
        const token = yield* owner.client.machines.createDaemonToken({ params: { orgID: org.id }, payload: { name: "pool" } })
        const pool = yield* newPool()
        const machineId = yield* newId(MachineId)
        const server = yield* serverUrl
        const launch: MachineLaunch = {
          machineId,
          cpu: 1,
          memoryMb: 256,
          providerOptions: { image: DOCKER_TEST_IMAGE },
          env: { AGENT_PLATFORM_DAEMON_TOKEN: token.token },
          nodeArguments: daemonArguments({ server, machineId, name: "docker-1", workDirectory: WORK_DIRECTORY })
        }
        const ref = yield* provider.start(pool, launch)
        expect(ref).toMatch(/^[0-9a-f]{64}$/)

        const container = Option.getOrThrow(yield* inspect(ref))
        expect(container.Name).toBe(`/${containerName(machineId)}`)
        expect(container.HostConfig).toMatchObject({
          NetworkMode: "host",
          NanoCpus: 1_000_000_000,
          Memory: 256 * 1024 * 1024,
          Binds: [`${PROJECT_ROOT}:${PROJECT_ROOT}:ro`],
          RestartPolicy: { Name: "no" },
          Init: true
        })
        expect(container.Config).toMatchObject({
          Image: DOCKER_TEST_IMAGE,
          Cmd: ["node", ...launch.nodeArguments],
          WorkingDir: "/workspace",
          Labels: { [POOL_LABEL]: pool.poolId, [MACHINE_LABEL]: machineId }
        })
        expect(container.Config.Env).toContain(`AGENT_PLATFORM_DAEMON_TOKEN=${token.token}`)

        const machines = (status: "online" | "offline") =>
          owner.client.machines.list({ params: { orgID: org.id }, query: { status } }).pipe(Effect.map((page) => page.data))
        const online = yield* eventually(machines("online"), (found) => found.length === 1, "the pool machine online", "60 seconds").pipe(
          Effect.catchDefect((defect) =>
            Effect.flatMap(logs(ref), (output) => Effect.die(new Error(`${String(defect)}; the container's output:\n${output}`)))
          )
        )
        expect(online[0]).toMatchObject({ name: "docker-1", status: "online", platform: "linux" })

        expect(yield* provider.list(pool)).toEqual([{ machineId, ref, running: true }])

        // The daemon serves the machine's files from inside the container: what the files route writes
        // is in the container's work directory (Docker's archive of it), not on the server's host.
        const path = { orgID: org.id, machineID: online[0].id }
        const file = "/workspace/from-the-api.txt"
        const written = yield* owner.client.machines.writeFile({ params: path, query: { path: file }, payload: { content: "in the container\n" } })
        expect(written).toMatchObject({ size: 17, created: true })
        const read = yield* owner.client.machines.readFile({ params: path, query: { path: file } })
        expect(read).toMatchObject({ path: file, content: "in the container\n" })
        expect(existsSync(file)).toBe(false)
        for (const inContainer of [file, `/workspace/${STATE_FILE_NAME}`]) {
          const archive = yield* dockerRequest(HOST, { method: "GET", path: `/containers/${ref}/archive?path=${encodeURIComponent(inContainer)}` })
          expect(archive.status).toBe(200)
        }

        yield* provider.stop(pool, machineId, ref)
        expect(yield* inspect(ref)).toEqual(Option.none())
        expect(yield* provider.list(pool)).toEqual([])
        const offline = yield* eventually(machines("offline"), (found) => found.length === 1, "the pool machine offline", "30 seconds")
        expect(offline[0].id).toBe(online[0].id)
        // Gone already: fine, by handle or by name.
        yield* provider.stop(pool, machineId, ref)
        yield* provider.stop(pool, machineId, null)
      }).pipe(Effect.provide(DockerProvider.layer.pipe(Layer.provide(testConfig())))), { timeout: 180_000 })

    it.effect("starting a machine whose container exists replaces it; env, work directory; list only the pool's machines", () =>
      Effect.gen(function*() {
        const provider = makeDockerProvider()
        const pool = yield* newPool()
        const other = yield* newPool()
        const machineId = yield* newId(MachineId)
        const first = yield* provider.start(pool, sleeperLaunch(machineId))
        const second = yield* provider.start(pool, sleeperLaunch(machineId, { cpu: 2, memoryMb: 64 }))
        expect(second).not.toBe(first)
        expect(yield* inspect(first)).toEqual(Option.none())
        const replaced = Option.getOrThrow(yield* inspect(second))
        expect(replaced.State.Running).toBe(true)
        expect(replaced.HostConfig).toMatchObject({ NanoCpus: 2_000_000_000, Memory: 64 * 1024 * 1024 })
        expect(replaced.Config.Env).toEqual(expect.arrayContaining(["GREETING=hello world", "EMPTY="]))
        expect(replaced.Config.WorkingDir).toBe(WORK_DIRECTORY)

        const elsewhere = yield* newId(MachineId)
        const otherRef = yield* provider.start(other, sleeperLaunch(elsewhere, { cpu: null, memoryMb: null }))
        const unlimited = Option.getOrThrow(yield* inspect(otherRef))
        expect(unlimited.HostConfig).toMatchObject({ NanoCpus: 0, Memory: 0 })
        expect(yield* provider.list(pool)).toEqual([{ machineId, ref: second, running: true }])
        expect(yield* provider.list(other)).toEqual([{ machineId: elsewhere, ref: otherRef, running: true }])

        // A machine whose process ended is listed, not running; its ending tells its exit code and the end of its output.
        const done = yield* newId(MachineId)
        // Docker reads stdout and stderr apart: the error is written a moment after the lines, so
        // that the log it keeps has it last (written at once, it was sometimes read before line 53).
        const failing = "for (let i = 1; i <= 60; i++) console.log('line ' + i);" +
          " setTimeout(() => { console.error('Error: it broke'); process.exit(3) }, 300)"
        const doneRef = yield* provider.start(pool, sleeperLaunch(done, { nodeArguments: ["-e", failing] }))
        const exited = yield* eventually(provider.list(pool), (found) => found.some((m) => m.machineId === done && !m.running), "the exited machine")
        expect(exited).toHaveLength(2)
        expect(exited.find((m) => m.machineId === done)).toEqual({ machineId: done, ref: doneRef, running: false })
        const ending = yield* provider.ending(pool, done, doneRef)
        expect(ending).toMatch(/^its container exited with code 3; its output ended with:\n/)
        expect(ending).toContain("line 60")
        expect(ending).toContain("Error: it broke")
        expect(ending).not.toContain("line 40")

        for (const [p, id, ref] of [[pool, machineId, second], [pool, done, doneRef], [other, elsewhere, otherRef]] as const) {
          yield* provider.stop(p, id, ref)
        }
        expect(yield* provider.list(pool)).toEqual([])
        expect(yield* provider.list(other)).toEqual([])
      }), { timeout: 180_000 })

    it.effect("with DATA_DIR memory:// the containers started and not stopped are removed when the server stops; a data directory keeps them", () =>
      Effect.gen(function*() {
        /** Starts machines with the provider of a server on `dataDir`, stops the first, then stops that server. */
        const startThenStopServer = (dataDir: string) =>
          Effect.gen(function*() {
            const scope = yield* Scope.make()
            // Fresh: not the instance of the app these tests share, which the memo map would hand out.
            const context = yield* Layer.buildWithScope(Layer.fresh(DockerProvider.layer).pipe(Layer.provide(testConfig({ dataDir }))), scope)
            const provider = Context.get(context, DockerProvider)
            const pool = yield* newPool()
            const stopped = yield* newId(MachineId)
            const stoppedRef = yield* provider.start(pool, sleeperLaunch(stopped))
            yield* provider.stop(pool, stopped, stoppedRef)
            const left = [yield* newId(MachineId), yield* newId(MachineId)]
            const refs = yield* Effect.forEach(left, (machineId) => provider.start(pool, sleeperLaunch(machineId)))
            yield* Scope.close(scope, Exit.void)
            return yield* Effect.forEach(refs, inspect)
          })

        const inMemory = yield* startThenStopServer("memory://")
        expect(inMemory).toEqual([Option.none(), Option.none()])
        const dataDir = mkdtempSync(join(tmpdir(), "agent-platform-docker-"))
        const kept = yield* startThenStopServer(dataDir).pipe(Effect.ensuring(Effect.sync(() => rmSync(dataDir, { recursive: true, force: true }))))
        expect(kept.map((container) => Option.getOrThrow(container).State.Running)).toEqual([true, true])
      }), { timeout: 180_000 })

    it.effect("check-connection against the real Docker Engine: the test image present, another absent", () =>
      Effect.gen(function*() {
        const owner = yield* newUser("docker-check")
        const org = yield* owner.client.organizations.create({ payload: { name: "Docker check" } })
        const auth = yield* owner.client.secrets.create({ params: { orgID: org.id }, payload: { name: "docker-auth", value: Redacted.make("{}") } })
        const check = (image: string) =>
          rawRequest(
            HttpClientRequest.post(`/v1/orgs/${org.id}/machine-pools/check-connection`).pipe(
              HttpClientRequest.bearerToken(owner.token),
              HttpClientRequest.bodyJsonUnsafe({
                provider: "docker",
                provider_auth_secret_id: auth.id,
                provider_config: { host: HOST },
                default_machine_provider_options: { image }
              })
            )
          )
        const present = yield* check(DOCKER_TEST_IMAGE)
        expect(present.status).toBe(200)
        expect(present.json).toMatchObject({ ok: true, provider: "docker" })
        expect(present.json!.details).toMatch(new RegExp(`^Docker \\S+ \\(API \\S+\\) at ${HOST}; image ${DOCKER_TEST_IMAGE} is present \\(sha256:[0-9a-f]{64}\\)$`))
        const absent = yield* check("agent-platform-missing:nope")
        expect(absent.status).toBe(422)
        expect(absent.json!.details).toContain("does not have the image agent-platform-missing:nope")
      }))

    it.effect("failures: an image that is not there, limits Docker refuses, no image, a Docker host that cannot be reached", () =>
      Effect.gen(function*() {
        const provider = makeDockerProvider()
        const pool = yield* newPool()
        const machineId = yield* newId(MachineId)
        const missing = yield* Effect.flip(
          provider.start(pool, sleeperLaunch(machineId, { providerOptions: { image: "agent-platform-missing:nope" } }))
        )
        expect(missing._tag).toBe("ProviderFailed")
        expect(missing.details).toContain(`Creating container ${containerName(machineId)} from image agent-platform-missing:nope`)
        expect(missing.details).toContain("the image agent-platform-missing:nope is not on the Docker host")
        expect(missing.details).toContain("No such image")
        expect(yield* provider.list(pool)).toEqual([])

        // More CPUs than the Docker host has: Docker refuses the container, and says why.
        const tooBig = yield* Effect.flip(provider.start(pool, sleeperLaunch(machineId, { cpu: 4096 })))
        expect(tooBig.details).toContain(`Creating container ${containerName(machineId)} from image ${DOCKER_TEST_IMAGE}: Docker answered 400`)
        expect(tooBig.details).toMatch(/CPUs/)
        expect(yield* provider.list(pool)).toEqual([])

        const noImage = yield* Effect.flip(provider.start(pool, sleeperLaunch(machineId, { providerOptions: {} })))
        expect(noImage.details).toContain("name no image")

        const nowhere = yield* newPool({ host: "unix:///nonexistent/docker.sock" })
        const unreachable = yield* Effect.flip(provider.start(nowhere, sleeperLaunch(machineId)))
        expect(unreachable._tag).toBe("ProviderFailed")
        expect(unreachable.details).toContain("Cannot reach the Docker Engine at unix:///nonexistent/docker.sock")
        const listing = yield* Effect.flip(provider.list(nowhere))
        expect(listing.details).toContain(`Listing the containers of pool ${nowhere.poolId}`)
        const stopping = yield* Effect.flip(provider.stop(nowhere, machineId, null))
        expect(stopping.details).toContain("Cannot reach the Docker Engine")
      }), { timeout: 60_000 })
  })
})
