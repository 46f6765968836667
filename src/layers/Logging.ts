/**
 * Logs: JSON lines on stdout, written in batches: one `write` per 50 ms window instead of one
 * synchronous write per line (stdout to a file or a pipe is synchronous in Node). The batch is
 * flushed when the layer closes, so shutdown loses nothing.
 */
import { Effect, Logger } from "effect"

const BATCH_WINDOW = "50 millis"

export const JsonLogsLive = Logger.replaceScoped(
  Logger.defaultLogger,
  Logger.batched(Logger.jsonLogger, BATCH_WINDOW, (lines) =>
    Effect.sync(() => {
      process.stdout.write(lines.join("\n") + "\n")
    }))
)
