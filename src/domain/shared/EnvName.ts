/**
 * Environment variable names: the keys of an agent config's `env_overlay` and
 * `secret_env_overlay`, and of a machine pool's `default_machine_env` and `default_machine_secret_env`.
 */
import { Schema } from "effect"

const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/u

/** What ENV_NAME_PATTERN takes, in words. */
const ENV_NAME_RULE = "a letter or _, then letters, digits or _ (at most 128)"

const envKeys = (record: Readonly<Record<string, unknown>>) => {
  const bad = Object.keys(record).find((key) => !ENV_NAME_PATTERN.test(key))
  return bad === undefined ||
    `keys must be environment variable names: ${ENV_NAME_RULE}; got ${JSON.stringify(bad.slice(0, 80))}`
}

/**
 * An object whose keys are environment variable names and whose values are `value`s. The keys
 * are checked by a filter on the whole object, which refuses the object: a Record whose key
 * schema refuses a key drops that pair silently (`{"1BAD": "x"}` decoded as `{}`).
 */
export const EnvRecord = <Value extends Schema.Top>(value: Value) =>
  Schema.Record(Schema.String, value).pipe(Schema.check(Schema.makeFilter(envKeys, {
    toJsonSchema: () => ({ propertyNames: { pattern: ENV_NAME_PATTERN.source } })
  })))
