import { type Duration, Effect, Schedule, TestServices } from "effect"

/** Waits on the real clock (tests run with a test clock that only moves when told). */
export const sleepLive = (duration: Duration.DurationInput) => TestServices.provideLive(Effect.sleep(duration))

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
    Effect.timeoutFail({ duration: timeout, onTimeout: () => new Error(`timed out waiting for ${what}`) }),
    Effect.orDie,
    TestServices.provideLive
  )
