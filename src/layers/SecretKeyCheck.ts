/**
 * At start-up, refuse a secret key other than the one the database's secrets were encrypted
 * with: the first server on a database records the key's fingerprint (an HMAC of a fixed text, so
 * it says nothing of the key), and every later start compares its own. Without the check, a
 * second process started with another key (or a lost `DATA_DIR/secret.key` next to a Postgres
 * that outlived it) would run, and fail on every secret it reads.
 */
import { Effect, Layer, Redacted } from "effect"
import { createHmac } from "node:crypto"
import { SecretKeyCheckRepository } from "../services/shared/SecretKeyCheckRepository.ts"
import { InvalidSecretKey, SecretKey } from "./SecretKey.ts"
import { withStartupLock } from "./StartupLock.ts"

const FINGERPRINTED_TEXT = "agent-platform secret key check v1"

/** The fingerprint of `key`: HMAC-SHA256 of a fixed text, hex. */
const fingerprintOf = (key: Redacted.Redacted<Buffer>) =>
  createHmac("sha256", Redacted.value(key)).update(FINGERPRINTED_TEXT).digest("hex")

export const SecretKeyCheckLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const fingerprint = fingerprintOf(yield* SecretKey)
    const recorded = yield* withStartupLock(
      Effect.flatMap(SecretKeyCheckRepository, (check) => check.recordOrRead(fingerprint))
    )
    if (recorded !== fingerprint) {
      return yield* new InvalidSecretKey({
        message: "the secret key differs from the one this database's secrets are encrypted with " +
          `(its fingerprint starts ${recorded.slice(0, 8)}, this key's ${fingerprint.slice(0, 8)}); ` +
          "set AGENT_PLATFORM_SECRET_KEY to that key, the same on every server process"
      })
    }
  })
).pipe(Layer.provide(Layer.merge(SecretKeyCheckRepository.layer, SecretKey.layer)))
