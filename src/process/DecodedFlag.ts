/**
 * A command-line flag decoded with a domain schema, as the admin command line and the daemon
 * read theirs: the command accepts exactly what the API accepts, and a value the schema refuses
 * is one sentence naming the flag (`--server must be an http:// or https:// address`), not the
 * tree of the schema.
 */
import { CliError, Flag } from "effect/cli"
import { Effect, Schema } from "effect"
import { describeIssues } from "./SchemaIssues.ts"

export const decodedWith = <A, I>(name: string, schema: Schema.Codec<A, I>) =>
(flag: Flag.Flag<I>): Flag.Flag<A> =>
  Flag.mapEffect(flag, (raw) =>
    Schema.decodeEffect(schema)(raw).pipe(
      Effect.mapError((error) =>
        new CliError.ValidationError({
          message: `--${name} ${describeIssues(error)}`
        })
      )
    ))
