/**
 * A machine daemon spoken by hand over a raw WebSocket, as a daemon in another language (or a
 * misbehaving one) could speak: registered with a daemon token of the runtime project's
 * organization, its hello sent, its welcome awaited. Used where a test needs to send what the
 * real daemon never would.
 */
import { Effect } from "effect"
import WebSocket from "ws"
import { serverUrl } from "./Daemons.ts"
import { eventually } from "./Polling.ts"
import { commandConfig, type RuntimeProject } from "./RuntimeProject.ts"
import { Reply, type ScriptedProviderShape } from "./ScriptedProvider.ts"
import { clientWith } from "./TestApp.ts"

/** The hello's fields other than its type and machine id. */
const HELLO = {
  protocol_version: 1,
  daemon_version: "1.0.0",
  platform: "linux",
  architecture: "x86_64",
  hostname: "h",
  directories: ["/tmp"],
  operations: ["tool", "file.read"],
  tools: ["run_command"]
}

/** A raw machine WebSocket: the frames it received, its close code once closed, and a way to send. */
const openSocket = (url: string, token: string) =>
  Effect.callback<{
    readonly socket: WebSocket
    readonly frames: Array<Record<string, any>>
    readonly closeCode: () => number | undefined
  }, Error>((resume) => {
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } })
    const frames: Array<Record<string, any>> = []
    let closeCode: number | undefined
    socket.on("message", (data) => frames.push(JSON.parse(String(data))))
    socket.once("close", (code) => (closeCode = code))
    socket.once("open", () => resume(Effect.succeed({ socket, frames, closeCode: () => closeCode })))
    // After the open, an error (the server resetting the connection) is the close that follows.
    socket.on("error", (error) => resume(Effect.fail(error)))
  })

/**
 * A machine named `name` in the project's organization whose daemon is this test: connected, its
 * hello sent (`hello` overrides its fields) and welcomed; granted to the project.
 */
export const handDaemon = (rt: RuntimeProject, name: string, hello: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const token = yield* rt.client.machines.createDaemonToken({ params: { orgID: rt.org.id }, payload: { name } })
    const daemon = yield* clientWith(token.token)
    const registered = yield* daemon.machineRegistration.register({
      payload: {
        machine_name: name,
        hostname: "host-1",
        platform: "linux",
        architecture: "x86_64",
        daemon_version: "1.0.0",
        directories: ["/tmp"]
      }
    })
    const machineId = registered.machine.id
    const url = `${(yield* serverUrl).replace("http", "ws")}${registered.machine_ws_path}`
    /** A connection of the machine: its socket opened, its hello sent and welcomed. */
    const connect = Effect.gen(function*() {
      const { closeCode, frames, socket } = yield* openSocket(url, registered.machine_token)
      /** Sends a frame as it is, JSON or not. */
      const sendText = (text: string) => Effect.sync(() => socket.send(text))
      const send = (message: Record<string, unknown>) => sendText(JSON.stringify(message))
      yield* send({ type: "hello", machine_id: machineId, ...HELLO, ...hello })
      yield* eventually(Effect.sync(() => frames), (f) => f.some((frame) => frame.type === "welcome"), "the welcome", "15 seconds")
      /** The first request of `operation` the server sent on this connection. */
      const requestFor = (operation: string) =>
        eventually(
          Effect.sync(() => frames.find((frame) => frame.type === "request" && frame.operation === operation)),
          (frame) => frame !== undefined,
          `a ${operation} request`,
          "30 seconds"
        ).pipe(Effect.map((frame) => frame!))
      /** The request ids the server acknowledged results of on this connection. */
      const acknowledged = Effect.sync(() => frames.filter((frame) => frame.type === "ack").flatMap((frame) => frame.request_ids))
      /** The code the connection closed with, once it has closed. */
      const closed = eventually(Effect.sync(closeCode), (code) => code !== undefined, "the connection closed", "30 seconds")
      return { frames, send, sendText, requestFor, acknowledged, closed, close: Effect.sync(() => socket.close()) } as const
    })
    const first = yield* connect
    yield* rt.client.machines.createGrant({
      params: { orgID: rt.org.id, machineID: machineId },
      payload: { target_project_id: rt.project.id }
    })
    /** `reconnect` opens another connection of the machine (the server supersedes this one). */
    return { machineId, ...first, reconnect: connect } as const
  })

/**
 * An agent of the project whose model calls `run_command` once on `daemon`'s machine (then says
 * "Done."), sent an input, and the request the daemon received for the call.
 */
export const commandCallSentTo = (
  rt: RuntimeProject,
  provider: ScriptedProviderShape,
  daemon: Effect.Success<ReturnType<typeof handDaemon>>
) =>
  Effect.gen(function*() {
    const config = yield* commandConfig(rt, { machine: daemon.machineId, cwd: "/tmp" })
    yield* provider.script([Reply.toolCall("run_command", { command: "echo hi" }), Reply.text("Done.")], { model: rt.slug })
    const agent = yield* rt.client.agents.create({ params: rt.projectPath, payload: { agent_config_id: config.id } })
    yield* rt.send(agent.id, "Run it")
    const request = yield* daemon.requestFor("tool")
    return { agent, request } as const
  })
