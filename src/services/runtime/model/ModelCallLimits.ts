/**
 * What one model call may take from its provider (docs/model-adapters.md, "Bounds"). The
 * timeouts are settings (AppConfig: AGENT_PLATFORM_MODEL_*_TIMEOUT_SECONDS).
 */

const KIB = 1024

/**
 * After the part of a body the call wants (a stream's final event, an error body's first bytes):
 * the rest is read and dropped for at most this long and AFTER_END_BYTES, so that a connection
 * whose body ends just after is kept open for the next call; one that goes on is closed.
 */
export const AFTER_END_MILLIS = 1000
export const AFTER_END_BYTES = 64 * KIB

/** `millis` as "5 minutes", "1 second", "0.5 seconds". */
export const describeMillis = (millis: number) => {
  const seconds = millis / 1000
  if (seconds >= 60 && seconds % 60 === 0) return seconds === 60 ? "1 minute" : `${seconds / 60} minutes`
  return seconds === 1 ? "1 second" : `${seconds} seconds`
}
