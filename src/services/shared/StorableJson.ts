/**
 * A JSON value received from outside the API's requests (a daemon's message, a model's response)
 * made storable: every string and property name in it holding a NUL or an unpaired UTF-16
 * surrogate gets U+FFFD in its place (storableText, domain/shared/StorableText.ts; docs/runtime.md,
 * "Text the platform receives"). Postgres text and jsonb cannot hold the one, jsonb refuses the
 * other, and a value the server cannot store would leave what waits for it waiting.
 *
 * Applied once where the value comes in, so that what the platform keeps in memory, sends on and
 * stores is the same text. Walked with a stack, never by recursion, so no depth exhausts the call
 * stack.
 */
import { storableText, unstorableCharacterOf } from "../../domain/shared/StorableText.ts"

/**
 * The stack of the check, kept between calls and left empty by each: the common value, which
 * holds nothing to replace, is checked without allocating anything. The check is synchronous and
 * calls nothing that could start another one meanwhile.
 */
const pending: Array<object> = []

const unstorable = (text: string) => unstorableCharacterOf(text) !== undefined

/** Whether a string or a property name anywhere in `root` cannot be stored. */
const holdsUnstorable = (root: object): boolean => {
  pending.length = 0
  pending.push(root)
  try {
    while (pending.length > 0) {
      const container = pending.pop() as Record<string, unknown> | Array<unknown>
      if (Array.isArray(container)) {
        for (let index = 0; index < container.length; index++) {
          const item = container[index]
          if (typeof item === "string") {
            if (unstorable(item)) return true
          } else if (typeof item === "object" && item !== null) pending.push(item)
        }
        continue
      }
      for (const key in container) {
        if (!Object.hasOwn(container, key)) continue
        if (unstorable(key)) return true
        const item = container[key]
        if (typeof item === "string") {
          if (unstorable(item)) return true
        } else if (typeof item === "object" && item !== null) pending.push(item)
      }
    }
    return false
  } finally {
    pending.length = 0
  }
}

/** Sets `key` as an own property (`__proto__` too, which plain assignment would take for the prototype). */
const setOwn = (target: Record<string, unknown>, key: string, value: unknown) => {
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  else target[key] = value
}

/** A copy of `root` with every string and property name made storable (the rare case). */
const storableCopy = (root: object): object => {
  const work: Array<readonly [source: object, target: Record<string, unknown> | Array<unknown>]> = []
  const copyOf = (value: unknown): unknown => {
    if (typeof value === "string") return storableText(value)
    if (typeof value !== "object" || value === null) return value
    const target = Array.isArray(value) ? [] : {}
    work.push([value, target])
    return target
  }
  const copied = copyOf(root) as object
  while (work.length > 0) {
    const [source, target] = work.pop()!
    if (Array.isArray(source)) {
      for (let index = 0; index < source.length; index++) (target as Array<unknown>).push(copyOf(source[index]))
      continue
    }
    for (const key in source) {
      if (Object.hasOwn(source, key)) {
        setOwn(target as Record<string, unknown>, storableText(key), copyOf((source as Record<string, unknown>)[key]))
      }
    }
  }
  return copied
}

/**
 * `value`, a JSON value (objects, arrays, strings, numbers, booleans, null; no cycles), with each
 * NUL and each unpaired surrogate half in its strings and property names replaced by U+FFFD.
 * `value` itself when nothing needs replacing, after a scan of its strings (a test of a character
 * class each) and without allocating; else a copy, objects and arrays made anew. Two property names
 * of one object that become the same name keep the later value.
 */
export const storableJson = <A>(value: A): A => {
  if (typeof value === "string") return storableText(value) as A
  if (typeof value !== "object" || value === null || !holdsUnstorable(value)) return value
  return storableCopy(value) as A
}
