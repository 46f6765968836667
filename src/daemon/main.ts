/**
 * The machine daemon's entry point (`npm run daemon`; its options: Cli.ts), run by Node itself
 * (its own TypeScript type stripping), not through tsx's loader. It keeps the token out of its
 * environment first (TokenHandover.ts), which may replace the process (execve) before anything
 * else has started: then registers tsx, which compiles the rest of the daemon. tsx's compiler
 * (esbuild) runs as a child process; one started before the replacement would stay behind it, a
 * zombie no one reaps for the daemon's whole life.
 */
import { keepTokenOutOfEnvironment } from "./TokenHandover.ts"

keepTokenOutOfEnvironment()
const { register } = await import("tsx/esm/api")
register()
const { main } = await import("./Cli.ts")
main()
