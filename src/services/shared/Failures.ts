/**
 * Turning one failure into another. Whoever replaces a failure with the error its caller sees
 * logs the replaced one, with its cause, so that nothing it knew is lost: at `Warning` for a
 * failure the platform did not expect (a database down), at `Debug` for an expected one that
 * only changes its name (a unique key refusing a second row of the same name).
 */
import { Cause, Effect, Option } from "effect"

export const replaceFailure = <const Tag extends string, E2>(
  tag: Tag,
  replacement: () => E2,
  level: "Warning" | "Debug" = "Warning"
) =>
<A, E extends { readonly _tag: string }, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, Extract<E, { readonly _tag: Tag }>> | E2, R> =>
{
  // Bound first: inferred against the declared return type, `catchIf`'s unused `orElse` types go astray.
  const replaced = Effect.catchIf(
    self,
    (failure): failure is Extract<E, { readonly _tag: Tag }> => failure._tag === tag,
    (failure) =>
      Effect.andThen(
        Effect.logWithLevel(level === "Warning" ? "Warn" : level)(`${tag} replaced by the error the caller sees`, Cause.fail(failure)),
        Effect.fail(replacement())
      )
  )
  return replaced
}

/** The value a lookup found, or the failure `onNone()` when it found none. */
export const someOrFail = <E>(onNone: () => E) =>
<A, E1, R>(self: Effect.Effect<Option.Option<A>, E1, R>): Effect.Effect<A, E | E1, R> =>
  Effect.flatMap(self, Option.match({ onNone: () => Effect.fail(onNone()), onSome: Effect.succeed }))
