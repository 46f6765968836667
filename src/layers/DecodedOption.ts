/**
 * A command-line option decoded with a domain schema, as the admin command line and the daemon
 * read theirs: the command accepts exactly what the API accepts, and a value the schema refuses
 * is one sentence naming the option (`--server must be an http:// or https:// address`), not
 * @effect/cli's tree of the schema.
 */
import { HelpDoc, Options, ValidationError } from "@effect/cli"
import { Effect, ParseResult, Schema } from "effect"

export const decodedWith = <A, I>(name: string, schema: Schema.Schema<A, I>) =>
(options: Options.Options<I>): Options.Options<A> =>
  Options.mapEffect(options, (raw) =>
    Schema.decode(schema)(raw).pipe(
      Effect.mapError((error) =>
        ValidationError.invalidValue(HelpDoc.p(
          `--${name} ${ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => issue.message).join("; ")}`
        ))
      )
    ))
