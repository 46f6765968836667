/**
 * Logs: JSON lines on stdout, written in batches: one `write` per 50 ms window instead of one
 * synchronous write per line (stdout to a file or a pipe is synchronous in Node). The batch is
 * flushed when the layer closes, so shutdown loses nothing.
 *
 * Once shutdown has begun, the workflow engine's "No healthy runners available" warnings are
 * left out: the cluster logs one each time it looks for a runner after its own runner has
 * stopped, which is what a normal stop looks like, not a problem to report.
 */
import { Effect, Logger, LogLevel } from "effect"

const BATCH_WINDOW = "50 millis"
const SHUTDOWN_NOISE = "No healthy runners available"

let shuttingDown = false

/** From now on this process is stopping (called when the listener starts to drain). */
export const beginShutdown = () => {
  shuttingDown = true
}

const isShutdownNoise = (options: Logger.Logger.Options<unknown>) => {
  if (!shuttingDown || options.logLevel !== LogLevel.Warning) return false
  const message = Array.isArray(options.message) ? options.message[0] : options.message
  return message === SHUTDOWN_NOISE
}

export const JsonLogsLive = Logger.replaceScoped(
  Logger.defaultLogger,
  Effect.map(
    Logger.batched(Logger.jsonLogger, BATCH_WINDOW, (lines) =>
      Effect.sync(() => {
        process.stdout.write(lines.join("\n") + "\n")
      })),
    (logger) =>
      Logger.make((options) => {
        if (!isShutdownNoise(options)) logger.log(options)
      })
  )
)
