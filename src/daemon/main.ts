/**
 * The machine daemon's entry point (`npm run daemon`; its options: Cli.ts). It keeps the token out
 * of its environment first (TokenHandover.ts), before the daemon's modules load: a daemon that
 * replaces itself there would otherwise load them twice, a second or two more at every start.
 */
import { keepTokenOutOfEnvironment } from "./TokenHandover.ts"

keepTokenOutOfEnvironment()
const { main } = await import("./Cli.ts")
main()
