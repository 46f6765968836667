/**
 * The daemon's command line as an operator meets it: an option whose value is refused stops the
 * daemon with one sentence naming the option, and a token no header can carry one saying so,
 * before it reaches for the server.
 */
import { afterAll, describe, expect, it } from "vitest"
import { rmSync } from "node:fs"
import { daemonDirs, killDaemons, startDaemon } from "../support/Daemons.ts"

const TIMEOUT_MS = 60_000

const TOKEN_REFUSED = "daemon stopped: the token has characters an Authorization header cannot carry (spaces, or anything " +
  "but printable ASCII); give the daemon token the server made (dtk_...) or a personal API key, not a placeholder"

const dirs = daemonDirs()
afterAll(() => {
  killDaemons()
  rmSync(dirs.root, { recursive: true, force: true })
})

describe("the daemon's options", () => {
  it.each([
    [{ server: "notaurl" }, "--server must be an http:// or https:// address"],
    [{ server: "ftp://127.0.0.1/" }, "--server must be an http:// or https:// address"],
    [{ org: "acme" }, "--org must be an id of the form org_ followed by 26 characters of [a-z2-7]"],
    // The README's placeholder pasted as it is: a token no Authorization header can carry.
    [{ token: "dtk_…" }, TOKEN_REFUSED],
    [{ token: "my admin token" }, TOKEN_REFUSED]
  ])("%o is refused with one sentence naming the option", async (options, sentence) => {
    const daemon = startDaemon({
      server: "http://127.0.0.1:1",
      token: "x",
      name: "options",
      dirs: [dirs.work],
      state: dirs.state,
      ...options
    })
    expect(await daemon.exited).toEqual({ code: 1, signal: null })
    expect(daemon.output().trim()).toBe(sentence)
  }, TIMEOUT_MS)
})
