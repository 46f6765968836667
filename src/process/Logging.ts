/**
 * Logs: JSON lines on stdout, written in batches: one `write` per 50 ms window instead of one
 * synchronous write per line (stdout to a file or a pipe is synchronous in Node). The batch is
 * flushed when the layer closes, so shutdown loses nothing.
 *
 * Each line has the fields it always had (`message`, `logLevel`, `timestamp`, `cause`,
 * `annotations`, `spans`, `fiberId`): Effect 4's JSON logger names the level `level`, so its
 * structured record is written here with the level under `logLevel`.
 *
 * Once shutdown has begun, the workflow engine's "No healthy runners available" warnings are
 * left out: the cluster logs one each time it looks for a runner after its own runner has
 * stopped, which is what a normal stop looks like, not a problem to report.
 */
import { Effect, Formatter, Logger } from "effect"

const BATCH_WINDOW = "50 millis"
const SHUTDOWN_NOISE = "No healthy runners available"

let shuttingDown = false

/** From now on this process is stopping (called when the listener starts to drain). */
export const beginShutdown = () => {
  shuttingDown = true
}

const isShutdownNoise = (options: Logger.Options<unknown>) => {
  if (!shuttingDown || options.logLevel !== "Warn") return false
  const message = Array.isArray(options.message) ? options.message[0] : options.message
  return message === SHUTDOWN_NOISE
}

/** One JSON line per entry, its level as `logLevel` (INFO, WARN, …). */
const jsonLine = Logger.map(Logger.formatStructured, ({ annotations, cause, fiberId, level, message, spans, timestamp }) =>
  Formatter.formatJson({ message, logLevel: level, timestamp, cause, annotations, spans, fiberId }))

export const JsonLogsLive = Logger.layer([
  Effect.map(
    Logger.batched(jsonLine, {
      window: BATCH_WINDOW,
      flush: (lines) =>
        Effect.sync(() => {
          process.stdout.write(lines.join("\n") + "\n")
        })
    }),
    (logger) =>
      Logger.make((options) => {
        if (!isShutdownNoise(options)) logger.log(options)
      })
  )
])
