/**
 * The machine daemon's entry point (`npm run daemon`; its options: Cli.ts), run by Node's own
 * TypeScript type stripping, like the server. It keeps the token out of its environment first
 * (TokenHandover.ts), which may replace the process (execve): only then does it load the rest of
 * the daemon, so that a replaced process has loaded nothing it throws away.
 */
import { keepTokenOutOfEnvironment } from "./TokenHandover.ts"

keepTokenOutOfEnvironment()
const { main } = await import("./Cli.ts")
main()
