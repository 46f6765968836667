/**
 * Loaded into a benchmark's server (`--import`) when BENCH_ALLOCATION_PROF_DIR is set: samples
 * the server's allocations from its start to its exit, the collected ones included (which
 * `node --heap-prof` leaves out, so it cannot show where garbage comes from), and writes them to
 * `<dir>/allocations.<pid>.heapprofile` when the process exits. Chrome's DevTools open the file
 * (Memory, "Load"); docs/performance-record.md says how it was read.
 */
import { writeFileSync } from "node:fs"
import { Session } from "node:inspector"
import { join } from "node:path"

/** Bytes between samples: V8's default is 32 KiB; half of it gives a finer picture at little cost. */
const SAMPLING_INTERVAL = 16_384

const dir = process.env.BENCH_ALLOCATION_PROF_DIR
if (dir !== undefined) {
  // An inspector session of this process: its messages are dispatched synchronously, so the
  // profile can still be taken in an `exit` listener.
  const session = new Session()
  session.connect()
  session.post("HeapProfiler.enable")
  session.post("HeapProfiler.startSampling", {
    samplingInterval: SAMPLING_INTERVAL,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true
  })
  process.once("exit", () => {
    session.post("HeapProfiler.stopSampling", (error, result) => {
      if (error === null) writeFileSync(join(dir, `allocations.${process.pid}.heapprofile`), JSON.stringify(result.profile))
    })
  })
}
