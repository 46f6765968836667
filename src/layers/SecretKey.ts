/**
 * The server's 32-byte key for secrets at rest (AES-256-GCM) and for signing machine tokens.
 *
 * From AGENT_PLATFORM_SECRET_KEY (64 hex characters, or base64/base64url of 32 bytes); when it is
 * unset, read from `DATA_DIR/secret.key`, which is generated (base64, mode 0600) the first time
 * and reused on every later start. With the in-memory data directory of tests and nothing set,
 * the key lives as long as the process, like the data.
 */
import { Context, Data, Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { AppConfig } from "./AppConfig.ts"
import { prepareDataDir, SECRET_KEY_FILE } from "./DataDir.ts"

/** The key is missing its file, unreadable, or not 32 bytes: the message says which and what to do. */
export class InvalidSecretKey extends Data.TaggedError("InvalidSecretKey")<{ readonly message: string }> {}

const SECRET_KEY_BYTES = 32

export class SecretKey extends Context.Service<SecretKey, Redacted.Redacted<Buffer>>()("SecretKey") {
  static readonly layer = Layer.effect(
    SecretKey,
    Effect.gen(function*() {
      const configured = yield* configuredSecretKey
      if (Option.isSome(configured)) return configured.value
      const config = yield* AppConfig
      if (config.dataDir === "memory://") return Redacted.make(randomBytes(SECRET_KEY_BYTES))
      return yield* keyFile(join(config.dataDir, SECRET_KEY_FILE))
    })
  )
}

/** The key AGENT_PLATFORM_SECRET_KEY holds, if set: refused when it is not one. */
export const configuredSecretKey = Effect.flatMap(AppConfig, (config) =>
  Option.match(config.secretKey, {
    onNone: () => Effect.succeedNone,
    onSome: (text) => Effect.asSome(parseKey(Redacted.value(text), "AGENT_PLATFORM_SECRET_KEY"))
  }))

/** 64 hex characters, or base64 (standard or url-safe) of exactly 32 bytes. */
const parseKey = (text: string, source: string): Effect.Effect<Redacted.Redacted<Buffer>, InvalidSecretKey> => {
  const trimmed = text.trim()
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, "hex")
    : /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)
    ? Buffer.from(trimmed, "base64")
    : Buffer.alloc(0)
  return bytes.length === SECRET_KEY_BYTES
    ? Effect.succeed(Redacted.make(bytes))
    : Effect.fail(
      new InvalidSecretKey({
        message: `${source} must be ${SECRET_KEY_BYTES} bytes written as 64 hex characters or as base64 ` +
          `(generate one with: openssl rand -base64 32)`
      })
    )
}

/** Reads the key file, creating it (exclusively, mode 0600) when it does not exist yet. */
const keyFile = (path: string) =>
  Effect.gen(function*() {
    yield* prepareDataDir(dirname(path))
    const created = yield* Effect.try({
      try: () => {
        writeFileSync(path, randomBytes(SECRET_KEY_BYTES).toString("base64") + "\n", { mode: 0o600, flag: "wx" })
        return true
      },
      catch: (error) => error
    }).pipe(
      Effect.catchIf(
        (error) => (error as NodeJS.ErrnoException)?.code === "EEXIST",
        () => Effect.succeed(false)
      ),
      Effect.mapError((error) => new InvalidSecretKey({ message: `Cannot create the secret key file ${path}: ${String(error)}` }))
    )
    if (created) yield* Effect.logInfo("generated a secret key").pipe(Effect.annotateLogs({ path }))
    const text = yield* Effect.try({
      try: () => readFileSync(path, "utf8"),
      catch: (error) => new InvalidSecretKey({ message: `Cannot read the secret key file ${path}: ${String(error)}` })
    })
    return yield* parseKey(text, path)
  })
