/**
 * Callbacks kept per key, each for the life of a scope: the stream waiters of an agent and the
 * listeners of a signal's topic (EventNotifications), the live output listeners of an agent
 * (LiveOutput). A key with no callback left is forgotten.
 */
import { Effect, type Scope } from "effect"

export class KeyedCallbacks<K, C> {
  readonly #byKey = new Map<K, Set<C>>()

  /** The callbacks of `key` now (none: undefined). */
  of(key: K): ReadonlySet<C> | undefined {
    return this.#byKey.get(key)
  }

  /** The keys that have callbacks now. */
  keys(): ReadonlyArray<K> {
    return [...this.#byKey.keys()]
  }

  /** The callbacks of `key` now, removed. */
  take(key: K): ReadonlySet<C> | undefined {
    const callbacks = this.#byKey.get(key)
    this.#byKey.delete(key)
    return callbacks
  }

  /** Keeps `callback` for `key` until the scope closes. */
  register(key: K, callback: C): Effect.Effect<void, never, Scope.Scope> {
    return Effect.acquireRelease(
      Effect.sync(() => {
        const callbacks = this.#byKey.get(key)
        if (callbacks === undefined) this.#byKey.set(key, new Set([callback]))
        else callbacks.add(callback)
      }),
      () =>
        Effect.sync(() => {
          const callbacks = this.#byKey.get(key)
          if (callbacks === undefined) return
          callbacks.delete(callback)
          if (callbacks.size === 0) this.#byKey.delete(key)
        })
    )
  }
}
