/**
 * Environment variable names: the keys of an agent config's `env_overlay` and
 * `secret_env_overlay`, and of a machine pool's `default_machine_env` and `default_machine_secret_env`.
 */
import { Schema } from "effect"

export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/u

/** What ENV_NAME_PATTERN takes, in words. */
export const ENV_NAME_RULE = "a letter or _, then letters, digits or _ (at most 128)"

export const EnvName = Schema.String.pipe(
  Schema.check(Schema.isPattern(ENV_NAME_PATTERN, { message: `must be an environment variable name: ${ENV_NAME_RULE}` }))
)
