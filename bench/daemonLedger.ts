/**
 * The daemon's request ledger (src/daemon/RequestLedger.ts), in this process on a real state file:
 * what a request costs it once the ledger is full (ACKNOWLEDGED_KEPT acknowledged ids and the
 * batch waiting to be forgotten), each request admitted, completed with a 1 KiB output and
 * acknowledged, as a daemon does for every request the server sends. `daemonLedger()` returns
 * rows `{ name, value, unit }`.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Outcome } from "../src/domain/machines/DaemonProtocol.ts"
import { ACKNOWLEDGED_KEPT, FORGET_BATCH, RequestLedger } from "../src/daemon/RequestLedger.ts"
import { StateFile } from "../src/daemon/StateFile.ts"
import { ownCpuMilliseconds } from "./Harness.ts"
import type { RuntimeRow } from "./runtime.ts"

/** Requests measured: enough for the journal to be folded into a new snapshot several times (StateFile.ts). */
const MEASURED = 2000
const OUTPUT: Outcome = { outcome: "succeeded", output: { content: "x".repeat(1024) } }

export const daemonLedger = async (): Promise<ReadonlyArray<RuntimeRow>> => {
  const dir = mkdtempSync(join(tmpdir(), "agent-platform-bench-ledger-"))
  const layer = RequestLedger.layer.pipe(
    Layer.provideMerge(StateFile.layer(join(dir, "state.json"), "http://127.0.0.1:1")),
    Layer.provide(NodeServices.layer)
  )
  const program = Effect.gen(function*() {
    const ledger = yield* RequestLedger
    const request = (index: number) => {
      const id = `tcl_bench${index}.1`
      return Effect.andThen(ledger.admit(id), Effect.andThen(ledger.complete(id, OUTPUT), ledger.acknowledge([id])))
    }
    for (let index = 0; index < ACKNOWLEDGED_KEPT + FORGET_BATCH; index++) yield* request(index)
    const cpuBefore = ownCpuMilliseconds()
    const started = performance.now()
    for (let index = 0; index < MEASURED; index++) yield* request(ACKNOWLEDGED_KEPT + FORGET_BATCH + index)
    return { cpu: (ownCpuMilliseconds() - cpuBefore) / MEASURED, wall: (performance.now() - started) / MEASURED }
  })
  try {
    const { cpu, wall } = await Effect.runPromise(Effect.scoped(Effect.provide(program, layer)))
    return [
      { name: `daemon CPU per request, full ledger (${MEASURED} requests)`, value: cpu * 1000, unit: "µs" },
      { name: `daemon time per request, full ledger (${MEASURED} requests)`, value: wall * 1000, unit: "µs" }
    ]
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
