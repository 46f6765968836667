/**
 * An answer the daemon sends as its connection closes (docs/daemon-protocol.md, "Delivery"): the
 * send returns, the request's fiber ends, and a later cancel of that request is answered from the
 * ledger. A real daemon against a fake server (FakeMachineServer.ts): the real server neither drops
 * a daemon's socket in the middle of a stream of results nor cancels a request it has the result
 * of. The window (the socket closed, the connection not yet ended) is short: each round streams
 * requests and drops the socket while results flow, six rounds; before the fix about half of the
 * rounds left a request whose send waited for ever.
 */
import { afterEach, expect, it } from "@effect/vitest"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { daemonDirs, killDaemons, startDaemon } from "../support/Daemons.ts"
import { type FakeConnection, startFakeMachineServer } from "../support/FakeMachineServer.ts"
import { until } from "../support/Polling.ts"

const ROUNDS = 6
/** More than the daemon answers before the socket is dropped: results are still flowing then. */
const REQUESTS_A_ROUND = 3000

const stopAfterEach: Array<() => Promise<unknown>> = []
afterEach(async () => {
  killDaemons()
  for (const stop of stopAfterEach.splice(0)) await stop()
})

it("a result sent as the socket closes holds nothing: every finished request's cancel is answered after the reconnect", async () => {
  const server = await startFakeMachineServer()
  stopAfterEach.push(server.close)
  const dirs = daemonDirs()
  const work = join(dirs.root, "work")
  mkdirSync(work)
  const file = join(work, "file.txt")
  writeFileSync(file, "content\n")
  const daemon = startDaemon({ server: server.url, token: "dtk_fake", name: "fake", dirs: [work], state: dirs.state })
  const welcomed = (index: number) =>
    until(
      async () => server.connections[index]?.frames.length ?? 0,
      (frames) => frames > 0,
      `connection ${index}'s hello (daemon output: ${daemon.output()})`,
      30_000
    ).then(() => server.connections[index]!)
  /** How many results of this round's requests came on the connection. */
  const resultsOf = (connection: FakeConnection, round: number) =>
    Promise.resolve(connection.resultIds().filter((id) => id.startsWith(`round${round}.`)).length)

  const sent: Array<string> = []
  for (let round = 0; round < ROUNDS; round++) {
    const connection = await welcomed(round)
    for (let index = 0; index < REQUESTS_A_ROUND; index++) {
      const id = `round${round}.${index}`
      sent.push(id)
      connection.send({ type: "request", request_id: id, operation: "file.read", path: file })
    }
    await until(() => resultsOf(connection, round), (count) => count >= 100, `round ${round}'s results flowing`)
    connection.socket.terminate()
  }

  // The daemon re-sends its unacknowledged results after the welcome (none is acknowledged here):
  // every request that finished, those whose send had waited for ever included. Taken once their count holds still.
  const last = await welcomed(ROUNDS)
  let previous = -1
  await until(async () => {
    const [count, before] = [last.resultIds().length, previous]
    previous = count
    return count === before && count > 0
  }, (settled) => settled, "the re-sent results")
  const resent = new Set(last.resultIds())
  const finished = sent.filter((id) => resent.has(id))
  expect(finished.length).toBeGreaterThan(ROUNDS * 100)
  const from = last.frames.length
  for (const id of finished) last.send({ type: "cancel", request_id: id })
  const answered = await until(
    async () => new Set(last.resultIds(from)),
    (ids) => finished.every((id) => ids.has(id)),
    "an answer to every cancel",
    10_000
  ).catch(() => new Set(last.resultIds(from)))
  // Before, a request whose send waited for ever stayed in `cancels`: its cancel was never answered.
  expect(finished.filter((id) => !answered.has(id))).toEqual([])
}, 120_000)
