/**
 * Loaded into a benchmark's server (`--import`) when BENCH_PGLITE_TIMES_DIR is set: times each
 * run of the embedded PGlite (its synchronous `execProtocolRawSync`, the work itself, on the
 * server's main thread) and, when the process exits, writes to
 * `<dir>/pglite-statements.<pid>.txt` the time spent by statement text, largest first: runs,
 * milliseconds in all and microseconds a run. A run is named by its first message: a simple
 * query's text, a Parse's text, or for a Bind the text its named statement was parsed with.
 * On a Postgres server the module does nothing (no PGlite runs). docs/performance-record.md says how
 * it was read.
 */
import { PGlite } from "@electric-sql/pglite"
import { writeFileSync } from "node:fs"
import { join } from "node:path"

/** Characters of a statement's text that name it in the summary. */
const TEXT_SHOWN = 120

interface Spent {
  runs: number
  milliseconds: number
}

const dir = process.env.BENCH_PGLITE_TIMES_DIR
if (dir !== undefined) {
  const textOfName = new Map<string, string>()
  const spent = new Map<string, Spent>()

  /** The NUL-terminated string at `offset`, and the offset after it. */
  const cString = (bytes: Uint8Array, offset: number): [string, number] => {
    const end = bytes.indexOf(0, offset)
    return [Buffer.from(bytes.buffer, bytes.byteOffset + offset, end - offset).toString(), end + 1]
  }
  const shown = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, TEXT_SHOWN)

  // Messages after startup: a type byte, then a 4-byte length, then the body.
  const nameOf = (messages: Uint8Array): string => {
    const type = String.fromCharCode(messages[0])
    if (type === "Q") return shown(cString(messages, 5)[0])
    if (type === "P") {
      const [name, next] = cString(messages, 5)
      const text = shown(cString(messages, next)[0])
      if (name !== "") textOfName.set(name, text)
      return text
    }
    if (type === "B") {
      const [, next] = cString(messages, 5)
      const [name] = cString(messages, next)
      return textOfName.get(name) ?? `(statement ${name})`
    }
    return `(message ${type})`
  }

  const prototype = PGlite.prototype as unknown as { execProtocolRawSync: (messages: Uint8Array) => Uint8Array }
  const run = prototype.execProtocolRawSync
  prototype.execProtocolRawSync = function(this: PGlite, messages: Uint8Array) {
    const start = performance.now()
    try {
      return run.call(this, messages)
    } finally {
      const name = nameOf(messages)
      const entry = spent.get(name) ?? { runs: 0, milliseconds: 0 }
      entry.runs++
      entry.milliseconds += performance.now() - start
      spent.set(name, entry)
    }
  }

  process.once("exit", () => {
    if (spent.size === 0) return
    const total = [...spent.values()].reduce((sum, entry) => sum + entry.milliseconds, 0)
    const lines = [...spent].sort((a, b) => b[1].milliseconds - a[1].milliseconds).map(([name, entry]) =>
      `${String(entry.runs).padStart(8)} ${entry.milliseconds.toFixed(0).padStart(8)} ms ${
        (1000 * entry.milliseconds / entry.runs).toFixed(0).padStart(7)
      } µs  ${name}`
    )
    writeFileSync(
      join(dir, `pglite-statements.${process.pid}.txt`),
      `${total.toFixed(0)} ms in PGlite\n    runs    total   a run  statement\n${lines.join("\n")}\n`
    )
  })
}
