import { Clock, type Duration, Effect, Schedule } from "effect"

/**
 * Runs `effect` on the real clock, under `it.effect`'s TestClock as well as without one
 * (TestClock.withLive only works where the clock is a TestClock).
 */
export const provideLive = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, Clock.Clock, Clock.Clock.defaultValue())

/** Waits on the real clock (tests run with a test clock that only moves when told). */
export const sleepLive = (duration: Duration.Input) => provideLive(Effect.sleep(duration))

/** Runs `effect` until `done` holds for its result (every 50 ms, up to `timeout`); fails the test otherwise. */
export const eventually = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  done: (value: A) => boolean,
  what: string,
  timeout: `${number} seconds` = "15 seconds"
) =>
  effect.pipe(
    Effect.filterOrFail(done, () => "not yet" as const),
    Effect.retry({ schedule: Schedule.spaced("50 millis"), while: (error) => error === "not yet" }),
    Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(new Error(`timed out waiting for ${what}`)) }),
    Effect.orDie,
    provideLive
  )

/**
 * Calls `f` every 100 ms until `done` holds for its value (up to `ms`), for tests that drive
 * child processes with promises; a call that throws counts as not yet.
 */
export const until = async <A>(f: () => Promise<A>, done: (value: A) => boolean, what: string, ms = 60_000): Promise<A> => {
  const deadline = Date.now() + ms
  while (true) {
    const value = await f().catch(() => undefined)
    if (value !== undefined && done(value)) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
