/**
 * Loaded into the soak's server (`--import`): after every full (mark-compact) garbage collection,
 * appends "<Date.now()> <heap used> <heap size> <RSS> <ArrayBuffers>" (bytes) to the file named by BENCH_HEAP_LOG.
 * The heap used right after a full collection is what is still reachable, the live heap, which
 * the RSS does not show: V8 lets the heap grow well past it before it collects (docs/performance-record.md).
 * The heap's size (`heapTotal`) is what V8 keeps for it, most of the RSS. The memory of
 * ArrayBuffers (Buffers among them) is outside the heap: mostly the history cache's bytes.
 */
import { appendFileSync } from "node:fs"
import { constants, PerformanceObserver } from "node:perf_hooks"

const file = process.env.BENCH_HEAP_LOG
if (file !== undefined) {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      // A "gc" entry's detail says which collection it was (Node's NodeGCPerformanceDetail).
      const { kind } = (entry as unknown as { readonly detail: { readonly kind: number } }).detail
      if (kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue
      const { arrayBuffers, heapTotal, heapUsed, rss } = process.memoryUsage()
      appendFileSync(file, `${Date.now()} ${heapUsed} ${heapTotal} ${rss} ${arrayBuffers}\n`)
    }
  }).observe({ entryTypes: ["gc"] })
}
