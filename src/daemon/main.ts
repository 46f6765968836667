/**
 * The machine daemon: `npm run daemon -- --server URL --token T [--name N] [--org O] [--dir D]... [--state FILE]`
 * (docs/daemon-protocol.md). It registers this machine with the server, keeps a WebSocket to it,
 * and executes the agents' built-in tools inside the given directories (the current directory
 * when none is given).
 *
 *   --server URL    the server's address, e.g. http://127.0.0.1:8080
 *   --token T       a daemon token or a personal API key; or AGENT_PLATFORM_DAEMON_TOKEN (better: the
 *                   command line is visible to other users of the machine)
 *   --name N        the machine's name (default: the host name)
 *   --org O         with a personal API key of a user in several organizations: the organization
 *                   (org_…) a new machine registers into
 *   --dir D         a directory the daemon may touch (repeatable)
 *   --state FILE    where to keep the machine id and the request ledger (StateFile.ts)
 */
import { Command, Options, ValidationError } from "@effect/cli"
import { NodeContext, NodeHttpClient } from "@effect/platform-node"
import { Cause, Config, Console, Effect, Layer, Option, Schema } from "effect"
import { hostname } from "node:os"
import { OrgId } from "../domain/shared/Ids.ts"
import { ResourceName } from "../domain/shared/ResourceName.ts"
import { decodedWith } from "../layers/DecodedOption.ts"
import { JsonLogsLive } from "../layers/Logging.ts"
import { runMain } from "../layers/RunMain.ts"
import { DAEMON_VERSION, DaemonConfig } from "./DaemonConfig.ts"
import { runDaemon, requestHandlingLayer } from "./Daemon.ts"
import { Directories } from "./Directories.ts"
import { defaultStatePath } from "./StateFile.ts"

const TOKEN_VARIABLE = "AGENT_PLATFORM_DAEMON_TOKEN"

const ServerAddress = Schema.String.pipe(
  Schema.filter((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol) || "must be an http:// or https:// address"),
  Schema.transform(Schema.instanceOf(URL), {
    strict: true,
    // A trailing slash, so that the API paths resolve under any path prefix of the address.
    decode: (text) => new URL(text.endsWith("/") ? text : `${text}/`),
    encode: (url) => url.toString()
  })
)

const options = {
  server: Options.text("server").pipe(Options.withDescription("the server's address, e.g. http://127.0.0.1:8080"), decodedWith("server", ServerAddress)),
  token: Options.redacted("token").pipe(
    Options.withDescription(`a daemon token or a personal API key (or set ${TOKEN_VARIABLE})`),
    Options.withFallbackConfig(Config.redacted(TOKEN_VARIABLE))
  ),
  name: Options.text("name").pipe(Options.withDescription("the machine's name (default: the host name)"), decodedWith("name", ResourceName), Options.optional),
  organization: Options.text("org").pipe(
    Options.withDescription("with a personal API key of a user in several organizations: the organization a new machine registers into"),
    decodedWith("org", OrgId),
    Options.optional
  ),
  directories: Options.text("dir").pipe(Options.withDescription("a directory the daemon may touch (repeatable; default: the current directory)"), Options.repeated),
  state: Options.text("state").pipe(Options.withDescription("the state file (default: under the user's config directory)"), Options.optional)
}

const daemon = Command.make("daemon", options, (args) =>
  Effect.gen(function*() {
    // Commands the daemon runs inherit its environment: they must not see its token.
    delete process.env[TOKEN_VARIABLE]
    const directories = args.directories.length > 0 ? args.directories : [process.cwd()]
    const statePath = Option.getOrElse(args.state, () => defaultStatePath(args.server))
    const machineName = yield* Option.match(args.name, {
      onSome: Effect.succeed,
      onNone: () => Schema.decode(ResourceName)(hostname().slice(0, 64)).pipe(Effect.orElseSucceed(() => "machine"))
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

Command.run(daemon, { name: "agent-platform-daemon", version: DAEMON_VERSION })(process.argv).pipe(
  Effect.tapErrorCause((cause) => {
    const failure = Cause.failureOption(cause)
    // @effect/cli has already printed its usage errors.
    if (Cause.isInterruptedOnly(cause) || Option.exists(failure, ValidationError.isValidationError)) return Effect.void
    const message = Option.getOrUndefined(failure) as { readonly message?: unknown } | undefined
    return Console.error(`daemon stopped: ${typeof message?.message === "string" ? message.message : Cause.pretty(cause)}`)
  }),
  Effect.provide(Layer.merge(NodeContext.layer, JsonLogsLive)),
  runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
