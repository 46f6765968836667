/**
 * The machine daemon's command line: `npm run daemon -- --server URL --token T [--name N] [--org O] [--dir D]... [--state FILE]`
 * (docs/daemon-protocol.md; main.ts runs it). The daemon registers this machine with the server,
 * keeps a WebSocket to it, and executes the agents' built-in tools inside the given directories
 * (the current directory when none is given).
 *
 *   --server URL    the server's address, e.g. http://127.0.0.1:8080
 *   --token T       a daemon token or a personal API key; or AGENT_PLATFORM_DAEMON_TOKEN (better: the
 *                   command line is visible to other users of the machine; TokenHandover.ts keeps it
 *                   from the commands)
 *   --name N        the machine's name (default: the host name)
 *   --org O         with a personal API key of a user in several organizations: the organization
 *                   (org_…) the machine registers into (named at every registration)
 *   --dir D         a directory the daemon may touch (repeatable)
 *   --state FILE    where to keep the machine id and the request ledger (StateFile.ts; its journal
 *                   beside it, FILE.journal)
 */
import { CliError, CliOutput, Command, Flag } from "effect/cli"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Cause, Config, Console, Effect, Layer, Option, Redacted, Schema, SchemaTransformation } from "effect"
import { hostname } from "node:os"
import { OrgId } from "../domain/shared/Ids.ts"
import { ResourceName } from "../domain/shared/ResourceName.ts"
import { decodedWith } from "../process/DecodedFlag.ts"
import { JsonLogsLive } from "../process/Logging.ts"
import { runMain } from "../process/RunMain.ts"
import { DAEMON_VERSION, DaemonConfig } from "./DaemonConfig.ts"
import { DaemonStop } from "./Connection.ts"
import { runDaemon, requestHandlingLayer } from "./Daemon.ts"
import { Directories } from "./Directories.ts"
import { defaultStatePath } from "./StateFile.ts"
import { TOKEN_VARIABLE } from "./TokenHandover.ts"

/**
 * What a token sent as `Authorization: Bearer <token>` may hold: printable ASCII without spaces.
 * Anything else (a pasted `dtk_…`) made every registration fail before it was sent, which the
 * daemon took for an unreachable server and retried for ever.
 */
const BEARER_TOKEN = /^[\x21-\x7e]+$/

const ServerAddress = Schema.String.pipe(
  Schema.check(Schema.makeFilter((text: string) =>
    URL.canParse(text) && /^https?:$/.test(new URL(text).protocol) || "must be an http:// or https:// address"
  )),
  Schema.decodeTo(
    Schema.instanceOf(URL),
    SchemaTransformation.transform({
      // A trailing slash, so that the API paths resolve under any path prefix of the address.
      decode: (text: string) => new URL(text.endsWith("/") ? text : `${text}/`),
      encode: (url: URL) => url.toString()
    })
  )
)

const options = {
  server: Flag.String("server").pipe(Flag.withDescription("the server's address, e.g. http://127.0.0.1:8080"), decodedWith("server", ServerAddress)),
  token: Flag.Redacted("token").pipe(
    Flag.withDescription(`a daemon token or a personal API key (or set ${TOKEN_VARIABLE})`),
    Flag.withFallbackConfig(Config.Redacted(TOKEN_VARIABLE))
  ),
  name: Flag.String("name").pipe(Flag.withDescription("the machine's name (default: the host name)"), decodedWith("name", ResourceName), Flag.optional),
  organization: Flag.String("org").pipe(
    Flag.withDescription("with a personal API key of a user in several organizations: the organization the machine registers into"),
    decodedWith("org", OrgId),
    Flag.optional
  ),
  // Zero or more times (v3 `Options.repeated`).
  directories: Flag.String("dir").pipe(Flag.withDescription("a directory the daemon may touch (repeatable; default: the current directory)"), Flag.atLeast(0)),
  state: Flag.String("state").pipe(Flag.withDescription("the state file (default: under the user's config directory)"), Flag.optional)
}

const daemon = Command.make("agent-platform-daemon", options, (args) =>
  Effect.gen(function*() {
    // Commands the daemon runs inherit `process.env`: they must not see its token.
    delete process.env[TOKEN_VARIABLE]
    if (!BEARER_TOKEN.test(Redacted.value(args.token))) {
      return yield* new DaemonStop({
        message: "the token has characters an Authorization header cannot carry (spaces, or anything but printable ASCII); " +
          "give the daemon token the server made (dtk_...) or a personal API key, not a placeholder"
      })
    }
    const directories = args.directories.length > 0 ? args.directories : [process.cwd()]
    const statePath = Option.getOrElse(args.state, () => defaultStatePath(args.server))
    const machineName = yield* Option.match(args.name, {
      onSome: Effect.succeed,
      onNone: () => Schema.decodeEffect(ResourceName)(hostname().slice(0, 64)).pipe(Effect.orElseSucceed(() => "machine"))
    })
    const config = Layer.effect(DaemonConfig, Effect.map(Directories, (directories) => ({
      server: args.server,
      token: args.token,
      machineName,
      organization: args.organization,
      directories
    })))
    yield* runDaemon.pipe(
      Effect.provide(config.pipe(Layer.provideMerge(requestHandlingLayer({ statePath, server: args.server.toString(), directories })))),
      Effect.provide(NodeHttpClient.layerUndici)
    )
  })).pipe(Command.withDescription("Register this machine with the server and run the agents' built-in tools on it"))

/**
 * A refused invocation prints what was refused, one sentence per error (`--server must be an
 * http:// or https:// address`), not the whole help; `--help` and `--version` print as usual.
 */
const UsageErrorsOnly = CliOutput.layerPresenter({
  present: (event) =>
    event._tag === "InvalidInvocation"
      ? Console.error(event.errors.map((error) => error.message).join("\n"))
      : CliOutput.defaultPresenter.present(event)
})

/** Runs the daemon as its command line says, until it stops; then the process exits. */
export const main = () =>
  // The arguments are process.argv's, from the Stdio service.
  Command.run(daemon, { version: DAEMON_VERSION }).pipe(
    Effect.tapCause((cause) => {
      const failure = Cause.findErrorOption(cause)
      // effect/cli has already printed its usage errors (UsageErrorsOnly).
      if (Cause.hasInterruptsOnly(cause) || Option.exists(failure, CliError.isCliError)) return Effect.void
      const message = Option.getOrUndefined(failure) as { readonly message?: unknown } | undefined
      return Console.error(`daemon stopped: ${typeof message?.message === "string" ? message.message : Cause.pretty(cause)}`)
    }),
    Effect.provide(Layer.mergeAll(NodeServices.layer, JsonLogsLive, UsageErrorsOnly)),
    runMain({ disableErrorReporting: true })
  )
