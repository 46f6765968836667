/**
 * The request ledger through the request runner, on a real state file: a request id runs once
 * however often it arrives, its result is kept until acknowledged and re-sent after a restart,
 * an acknowledgement is written with the next change or at the stop, acknowledged ids are forgotten
 * in batches, a request that was running when the daemon stopped is not run again, cancels, and a
 * request whose handling was interrupted while it was admitted. The state file: its lock (a live
 * holder's, one still being written, another daemon's left at a stop, and one whose takeover
 * another daemon has begun or left unfinished), its server,
 * its journal replayed over its snapshot (an unfinished last line ignored, a damaged one
 * refused, an old journal left by a stop between a snapshot and its journal ignored), and a file
 * written before journals.
 */
import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Layer, Queue, Scope } from "effect"
import { TestClock } from "effect/testing"
import { spawn, spawnSync } from "node:child_process"
import { appendFileSync, copyFileSync, existsSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs"
import type { DaemonMessage, Request } from "../../src/domain/machines/DaemonProtocol.ts"
import { operationServicesLayer } from "../../src/daemon/Daemon.ts"
import { Outbox } from "../../src/daemon/Outbox.ts"
import { ACKNOWLEDGED_KEPT, ACKNOWLEDGED_MEMORY, FORGET_BATCH, RequestLedger } from "../../src/daemon/RequestLedger.ts"
import { RequestRunner } from "../../src/daemon/RequestRunner.ts"
import { loadState, MIN_JOURNAL_BYTES, StateFile } from "../../src/daemon/StateFile.ts"
import type { MachineId } from "../../src/domain/shared/Ids.ts"
import { contentOnceWritten, livingProcessesOf, makeTree, type Tree } from "./Fixtures.ts"

const SERVER = "http://127.0.0.1:1"

let tree: Tree
beforeEach(() => {
  tree = makeTree()
})
afterEach(() => tree.remove())

/** A daemon's request handling on the tree's state file, its results collected as the connection would send them. */
const startDaemon = async () => {
  const scope = Effect.runSync(Scope.make())
  const state = StateFile.layer(tree.path("..", "state.json"), SERVER)
  const ledger = RequestLedger.layer.pipe(Layer.provideMerge(state))
  const layer = RequestRunner.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(ledger, Outbox.layer, operationServicesLayer([tree.root])))
  )
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const sent = Effect.runSync(Queue.unbounded<DaemonMessage>())
  const use = <A>(effect: Effect.Effect<A, never, RequestRunner | RequestLedger | Outbox>) =>
    Effect.runPromise(Effect.provide(effect, context))
  await use(Effect.flatMap(Outbox, (outbox) => outbox.attach((message) => Queue.offer(sent, message))))
  return {
    runner: (f: (runner: typeof RequestRunner.Service) => Effect.Effect<void>) => use(Effect.flatMap(RequestRunner, f)),
    /** As `runner`, interrupted at its first wait (a state-file write), as an ending connection interrupts the handling of its message. */
    interruptedRunner: (f: (runner: typeof RequestRunner.Service) => Effect.Effect<void>) =>
      Effect.runPromise(Fiber.interrupt(Effect.runFork(Effect.provide(Effect.flatMap(RequestRunner, f), context)))),
    ledger: <A>(f: (ledger: typeof RequestLedger.Service) => Effect.Effect<A>) => use(Effect.flatMap(RequestLedger, f)),
    nextSent: () => Effect.runPromise(Queue.take(sent).pipe(Effect.timeout("20 seconds"))),
    sentNow: () => Effect.runSync(Queue.clear(sent)),
    stop: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const command = (request_id: string, command: string): Request => ({
  type: "request",
  request_id,
  operation: "tool",
  tool_call_id: "tcl_ledger",
  tool: "run_command",
  input: { command },
  cwd: null,
  env: {},
  unset_env: []
})

/** The ledger as the state file's snapshot and journal hold it now (what a restart would load). */
const ledgerOnDisk = (path = tree.path("..", "state.json")) => Effect.runPromise(Effect.map(loadState(path, SERVER), (state) => state.requests))

const runs = () => (existsSync(tree.path("runs")) ? readFileSync(tree.path("runs"), "utf8").split("\n").filter(Boolean).length : 0)

describe("the request ledger", () => {
  it("runs a request id once: a repeat while it runs is ignored, a repeat once done gets the stored result", async () => {
    const daemon = await startDaemon()
    const request = command("req-1", "echo run >> runs; sleep 0.3; echo finished")
    await daemon.runner((runner) => runner.run(request))
    await daemon.runner((runner) => runner.run(request))
    const result = await daemon.nextSent()
    expect(result).toMatchObject({ type: "result", request_id: "req-1", outcome: "succeeded", output: { exit_code: 0, stdout: "finished\n" } })
    expect(daemon.sentNow()).toEqual([])
    await daemon.runner((runner) => runner.run(request))
    expect(await daemon.nextSent()).toEqual(result)
    expect(runs()).toBe(1)
    await daemon.stop()
  })

  it("keeps results until acknowledged, across a restart, and never runs an acknowledged id again", async () => {
    const first = await startDaemon()
    await first.runner((runner) => runner.run(command("req-a", "echo a >> runs")))
    await first.runner((runner) => runner.run(command("req-b", "echo b >> runs")))
    const results = [await first.nextSent(), await first.nextSent()]
    await first.stop()

    const second = await startDaemon()
    const unacknowledged = await second.ledger((ledger) => ledger.unacknowledged)
    expect(unacknowledged.map((entry) => entry.request_id).sort()).toEqual(["req-a", "req-b"])
    expect(unacknowledged.map(({ request_id, outcome }) => ({ type: "result", request_id, ...outcome })).sort((a, b) => a.request_id.localeCompare(b.request_id)))
      .toEqual([...results].sort((a, b) => (a as { request_id: string }).request_id.localeCompare((b as { request_id: string }).request_id)))
    // The server re-sends a request whose result it never got: answered from the ledger.
    await second.runner((runner) => runner.run(command("req-a", "echo a >> runs")))
    expect(await second.nextSent()).toMatchObject({ request_id: "req-a", outcome: "succeeded" })
    await second.ledger((ledger) => ledger.acknowledge(["req-a"]))
    expect((await second.ledger((ledger) => ledger.unacknowledged)).map((entry) => entry.request_id)).toEqual(["req-b"])
    await second.stop()

    const third = await startDaemon()
    await third.runner((runner) => runner.run(command("req-a", "echo a >> runs")))
    expect(await third.nextSent()).toMatchObject({ request_id: "req-a", outcome: "failed", error: { code: "already_executed" } })
    expect(runs()).toBe(2)
    await third.stop()
  })

  it("writes an acknowledgement with the next request's entry, or when the daemon stops", async () => {
    const stateOnDisk = async (id: string) => (await ledgerOnDisk()).get(id)?.state
    const daemon = await startDaemon()
    await daemon.runner((runner) => runner.run(command("req-a", "echo a >> runs")))
    await daemon.nextSent()
    expect(await stateOnDisk("req-a")).toBe("done")
    await daemon.ledger((ledger) => ledger.acknowledge(["req-a"]))
    // Not written yet: a crash now would send the result again, which the server acknowledges again.
    expect(await stateOnDisk("req-a")).toBe("done")
    await daemon.runner((runner) => runner.run(command("req-b", "echo b >> runs")))
    await daemon.nextSent()
    expect(await stateOnDisk("req-a")).toBe("acknowledged")
    await daemon.ledger((ledger) => ledger.acknowledge(["req-b"]))
    expect(await stateOnDisk("req-b")).toBe("done")
    await daemon.stop()
    expect(await stateOnDisk("req-b")).toBe("acknowledged")
  })

  it.effect("forgets acknowledged ids in batches: the newest ACKNOWLEDGED_KEPT are kept, none older than ACKNOWLEDGED_MEMORY", () =>
    Effect.gen(function*() {
      const ledger = yield* RequestLedger
      const stateFile = yield* StateFile
      const remembered = Effect.map(stateFile.requests, (requests) => [...requests.keys()])
      // A request a millisecond, as the daemon serves it: admitted, completed, acknowledged.
      const serve = (index: number) =>
        Effect.gen(function*() {
          yield* TestClock.adjust(1)
          yield* ledger.admit(`req-${index}`)
          yield* ledger.complete(`req-${index}`, { outcome: "succeeded", output: {} })
          yield* ledger.acknowledge([`req-${index}`])
        })
      const batchFull = ACKNOWLEDGED_KEPT + FORGET_BATCH
      for (let index = 0; index < batchFull - 1; index++) yield* serve(index)
      expect((yield* remembered).length).toBe(batchFull - 1)
      // One more makes the batch: the oldest FORGET_BATCH go at once.
      yield* serve(batchFull - 1)
      const kept = yield* remembered
      expect(kept.length).toBe(ACKNOWLEDGED_KEPT)
      expect(kept).not.toContain(`req-${FORGET_BATCH - 1}`)
      expect(kept).toContain(`req-${FORGET_BATCH}`)
      expect(kept).toContain(`req-${batchFull - 1}`)
      // An hour later, the next acknowledgement forgets every id acknowledged before it.
      yield* TestClock.adjust(Duration.sum(ACKNOWLEDGED_MEMORY, Duration.millis(1)))
      yield* serve(batchFull)
      expect(yield* remembered).toEqual([`req-${batchFull}`])
    }).pipe(Effect.provide(RequestLedger.layer.pipe(Layer.provideMerge(StateFile.layer(tree.path("..", "forgetting.json"), SERVER))))))

  it("does not run again a request that was running when the daemon stopped: it answers interrupted", async () => {
    const first = await startDaemon()
    await first.runner((runner) => runner.run(command("req-long", "echo $$ > group; echo run >> runs; sleep 100")))
    const group = Number(await contentOnceWritten(tree.path("group")))
    await first.stop()
    expect(livingProcessesOf(group)).toEqual([])

    const second = await startDaemon()
    expect(await second.ledger((ledger) => ledger.unacknowledged)).toEqual([
      { request_id: "req-long", outcome: { outcome: "failed", error: { code: "interrupted", message: expect.any(String) } } }
    ])
    await second.runner((runner) => runner.run(command("req-long", "echo run >> runs; sleep 100")))
    expect(await second.nextSent()).toMatchObject({ request_id: "req-long", error: { code: "interrupted" } })
    expect(runs()).toBe(1)
    await second.stop()
  })

  it("cancels a running request (its process group killed), and a request cancelled before it arrived never runs", async () => {
    const daemon = await startDaemon()
    await daemon.runner((runner) => runner.run(command("req-c", "echo $$ > group; sleep 100")))
    const group = Number(await contentOnceWritten(tree.path("group")))
    await daemon.runner((runner) => runner.cancel("req-c"))
    expect(await daemon.nextSent()).toMatchObject({ request_id: "req-c", outcome: "failed", error: { code: "cancelled" } })
    expect(livingProcessesOf(group)).toEqual([])

    await daemon.runner((runner) => runner.cancel("req-early"))
    expect(await daemon.nextSent()).toMatchObject({ request_id: "req-early", error: { code: "cancelled" } })
    await daemon.runner((runner) => runner.run(command("req-early", "echo run >> runs")))
    expect(await daemon.nextSent()).toMatchObject({ request_id: "req-early", error: { code: "cancelled" } })
    expect(runs()).toBe(0)
    await daemon.stop()
  })

  it("runs a request, or answers a cancel, whose handling was interrupted while its admission was written", async () => {
    const daemon = await startDaemon()
    await daemon.interruptedRunner((runner) => runner.run(command("req-i", "echo run >> runs")))
    // Sent again after the reconnect.
    await daemon.runner((runner) => runner.run(command("req-i", "echo run >> runs")))
    expect(await daemon.nextSent()).toMatchObject({ request_id: "req-i", outcome: "succeeded" })
    expect(runs()).toBe(1)

    await daemon.interruptedRunner((runner) => runner.cancel("req-j"))
    await daemon.runner((runner) => runner.cancel("req-j"))
    expect(await daemon.nextSent()).toMatchObject({ request_id: "req-j", error: { code: "cancelled" } })
    await daemon.stop()
  })

  it("answers a request it cannot decode once, under its id", async () => {
    const daemon = await startDaemon()
    const failure = { code: "unsupported_operation" as const, message: "unknown operation git.worktree" }
    await daemon.runner((runner) => runner.refuse("req-new-op", failure))
    expect(await daemon.nextSent()).toEqual({ type: "result", request_id: "req-new-op", outcome: "failed", error: failure })
    await daemon.stop()
  })
})

describe("the state file", () => {
  const open = (path: string, server = SERVER) => Effect.runPromise(Effect.scoped(Layer.build(StateFile.layer(path, server))))

  it("is held by one daemon at a time: a live holder refuses, a stale lock is taken over", async () => {
    const path = tree.path("..", "locked.json")
    const holder = spawn("sleep", ["30"])
    try {
      writeFileSync(`${path}.lock`, String(holder.pid))
      await expect(open(path)).rejects.toThrow(`another daemon (pid ${holder.pid}) uses it`)
    } finally {
      holder.kill("SIGKILL")
    }
    await new Promise((resolve) => holder.once("exit", resolve))
    await open(path)
    expect(existsSync(`${path}.lock`)).toBe(false)
  })

  it("is not taken from a daemon still writing its lock, nor its lock removed by another daemon's stop", async () => {
    const path = tree.path("..", "contended.json")
    const lockFile = `${path}.lock`
    // A daemon between creating its lock file and writing its pid in it.
    writeFileSync(lockFile, "")
    await expect(open(path)).rejects.toThrow("another daemon is starting on it")
    expect(readFileSync(lockFile, "utf8")).toBe("")
    // Left empty for longer than a write takes: that daemon is gone.
    utimesSync(lockFile, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000))
    await open(path)
    expect(existsSync(lockFile)).toBe(false)

    // A daemon whose lock another one has taken over (as it would a lock it found stale) leaves that lock when it stops.
    const holder = spawn("sleep", ["30"])
    try {
      const scope = Effect.runSync(Scope.make())
      await Effect.runPromise(Layer.buildWithScope(StateFile.layer(path, SERVER), scope))
      writeFileSync(lockFile, String(holder.pid))
      await Effect.runPromise(Scope.close(scope, Exit.void))
      expect(readFileSync(lockFile, "utf8")).toBe(String(holder.pid))
      await expect(open(path)).rejects.toThrow(`another daemon (pid ${holder.pid}) uses it`)
    } finally {
      holder.kill("SIGKILL")
    }
  })

  it("is taken over past a takeover marker left by a daemon gone, not while another daemon takes it over", async () => {
    const path = tree.path("..", "taken-over.json")
    const lockFile = `${path}.lock`
    const marker = `${lockFile}.takeover`
    const gone = spawnSync("true").pid!
    const longAgo = new Date(Date.now() - 60_000)
    const holder = spawn("sleep", ["30"])
    try {
      // A daemon taking the stale lock over now (src/process/PidLockFile.ts), its pid in the marker or not yet.
      writeFileSync(lockFile, String(gone))
      writeFileSync(marker, String(holder.pid))
      await expect(open(path)).rejects.toThrow(`another daemon (pid ${holder.pid}) uses it`)
      expect(readFileSync(marker, "utf8")).toBe(String(holder.pid))
      writeFileSync(marker, "")
      await expect(open(path)).rejects.toThrow("another daemon is starting on it")
      expect(readFileSync(lockFile, "utf8")).toBe(String(gone))

      // Markers left by a takeover that did not finish: its daemon gone, never written, or older
      // than a takeover lasts (the pid in it another process's since).
      const leftMarkers = [String(gone), "", String(holder.pid)]
      for (const [index, content] of leftMarkers.entries()) {
        writeFileSync(lockFile, String(gone))
        writeFileSync(marker, content)
        if (index > 0) utimesSync(marker, longAgo, longAgo)
        await open(path)
        expect(existsSync(lockFile)).toBe(false)
        expect(existsSync(marker)).toBe(false)
      }
    } finally {
      holder.kill("SIGKILL")
    }
  })

  it("belongs to one server, and a damaged one is refused with what to do", async () => {
    const daemon = await startDaemon()
    await daemon.stop()
    const path = tree.path("..", "state.json")
    await expect(open(path, "http://elsewhere:9")).rejects.toThrow(`belongs to the server ${SERVER}`)
    writeFileSync(path, "{not json")
    await expect(open(path)).rejects.toThrow(`is damaged; move it and ${path}.journal away`)
  })

  /** Opens the state file at `path`, uses it, and stops. */
  const withStateFile = (path: string, use: (stateFile: typeof StateFile.Service) => Effect.Effect<void>) =>
    Effect.runPromise(Effect.flatMap(StateFile, use).pipe(Effect.provide(StateFile.layer(path, SERVER))))

  /** Opens the state file at `path`, makes `changes` (each a request id's entry, written one at a time), and stops. */
  const changeAndStop = (path: string, changes: ReadonlyArray<readonly [string, number]>) =>
    withStateFile(path, (stateFile) =>
      Effect.forEach(changes, ([id, at]) => stateFile.change(() => [undefined, [[id, { state: "acknowledged", at }]]]), { discard: true }))

  it("replays its journal over its snapshot, ignores a last line whose write did not finish, and refuses a damaged line", async () => {
    const path = tree.path("..", "journaled.json")
    await changeAndStop(path, [["req-1", 1], ["req-2", 2]])
    // Opening writes a snapshot and starts a journal: the changes after it are in the journal only.
    await changeAndStop(path, [["req-3", 3]])
    expect(Object.keys(JSON.parse(readFileSync(path, "utf8")).requests)).toEqual(["req-1", "req-2"])
    expect([...(await ledgerOnDisk(path)).keys()]).toEqual(["req-1", "req-2", "req-3"])

    // A daemon killed in the middle of a change's write: the change was never acted on.
    const journal = `${path}.journal`
    const complete = readFileSync(journal, "utf8")
    appendFileSync(journal, `[["req-4",{"state":"acknow`)
    expect([...(await ledgerOnDisk(path)).keys()]).toEqual(["req-1", "req-2", "req-3"])

    writeFileSync(journal, `${complete}[["req-4",{"state":"acknowledged"}]]\n`)
    await expect(ledgerOnDisk(path)).rejects.toThrow(`The state file ${path} is damaged`)
    await expect(open(path)).rejects.toThrow(`The state file ${path} is damaged`)
  })

  it("writes its snapshot again once the journal has grown past it, and ignores a journal the snapshot already holds", async () => {
    const path = tree.path("..", "compacted.json")
    const journal = `${path}.journal`
    const many = Array.from({ length: 8000 }, (_, index) => [`req-${index}`, index] as const)
    await changeAndStop(path, many)
    expect(statSync(journal).size).toBeLessThanOrEqual(MIN_JOURNAL_BYTES)
    expect((await ledgerOnDisk(path)).size).toBe(8000)

    // A daemon stopped after a new snapshot's rename and before its journal began: the journal
    // on disk is the last snapshot's, whose changes the new one holds, and a new machine's
    // snapshot holds none of them.
    copyFileSync(journal, `${journal}.old`)
    await withStateFile(path, (stateFile) => stateFile.registered("mch_aaaaaaaaaaaaaaaaaaaaaaaaaa" as MachineId))
    copyFileSync(`${journal}.old`, journal)
    const loaded = await Effect.runPromise(loadState(path, SERVER))
    expect(loaded.machineId).toBe("mch_aaaaaaaaaaaaaaaaaaaaaaaaaa")
    expect(loaded.requests.size).toBe(0)
  })

  it("reads a state file written before journals", async () => {
    const path = tree.path("..", "old.json")
    writeFileSync(path, JSON.stringify({
      version: 1,
      server: SERVER,
      machine_id: null,
      requests: { "req-old": { state: "done", at: 1, outcome: { outcome: "succeeded", output: { content: "x" } } } }
    }))
    writeFileSync(`${path}.journal`, `{"journal":"not-this-one"}\n[["req-stray",{"state":"running","at":2}]]\n`)
    expect([...(await ledgerOnDisk(path)).keys()]).toEqual(["req-old"])
    await changeAndStop(path, [["req-new", 3]])
    expect([...(await ledgerOnDisk(path)).keys()]).toEqual(["req-old", "req-new"])
  })
})
