/**
 * A JSON value received from outside the API's requests (a daemon's message, a model's response)
 * made storable: every string and property name in it holding a NUL or an unpaired UTF-16
 * surrogate gets U+FFFD in its place (storableText, domain/shared/StorableText.ts; docs/runtime.md,
 * "Text the platform receives"), and every array or object nested deeper than MAX_NESTING_DEPTH
 * levels becomes the string DEEPER_THAN_LIMIT. Postgres text and jsonb cannot hold the one, jsonb
 * refuses the other, a value nested some thousands deep overflows the stack of `JSON.stringify`
 * (or of jsonb's parser, on the embedded database from 10,000 levels), and a value the server
 * cannot store would leave what waits for it waiting.
 *
 * Applied once where the value comes in, so that what the platform keeps in memory, sends on and
 * stores is the same value. Walked with a stack, never by recursion, so no depth exhausts the call
 * stack.
 */
import { MAX_NESTING_DEPTH } from "../../domain/shared/Nesting.ts"
import { storableText, unstorableCharacterOf } from "../../domain/shared/StorableText.ts"

/** What takes the place of an array or object nested deeper than MAX_NESTING_DEPTH levels. */
export const DEEPER_THAN_LIMIT = `[left out: nested deeper than ${MAX_NESTING_DEPTH} levels]`

/**
 * The stack of the check (the containers and their levels, the root being level 1), kept between
 * calls and left empty by each: the common value, which holds nothing to replace, is checked
 * without allocating anything. The check is synchronous and calls nothing that could start
 * another one meanwhile.
 */
const pending: Array<object> = []
const levels: Array<number> = []

const unstorable = (text: string) => unstorableCharacterOf(text) !== undefined

/** Whether a string or a property name anywhere in `root` cannot be stored, or an array or object in it nests too deep. */
const holdsUnstorable = (root: object): boolean => {
  pending.length = 0
  levels.length = 0
  pending.push(root)
  levels.push(1)
  try {
    while (pending.length > 0) {
      const container = pending.pop() as Record<string, unknown> | Array<unknown>
      const level = levels.pop()!
      if (level > MAX_NESTING_DEPTH) return true
      if (Array.isArray(container)) {
        for (let index = 0; index < container.length; index++) {
          const item = container[index]
          if (typeof item === "string") {
            if (unstorable(item)) return true
          } else if (typeof item === "object" && item !== null) {
            pending.push(item)
            levels.push(level + 1)
          }
        }
        continue
      }
      for (const key in container) {
        if (!Object.hasOwn(container, key)) continue
        if (unstorable(key)) return true
        const item = container[key]
        if (typeof item === "string") {
          if (unstorable(item)) return true
        } else if (typeof item === "object" && item !== null) {
          pending.push(item)
          levels.push(level + 1)
        }
      }
    }
    return false
  } finally {
    pending.length = 0
    levels.length = 0
  }
}

/** Sets `key` as an own property (`__proto__` too, which plain assignment would take for the prototype). */
const setOwn = (target: Record<string, unknown>, key: string, value: unknown) => {
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  else target[key] = value
}

/** A copy of `root` with every string and property name made storable, and what nests too deep left out (the rare case). */
const storableCopy = (root: object): object => {
  const work: Array<readonly [source: object, target: Record<string, unknown> | Array<unknown>, level: number]> = []
  const copyOf = (value: unknown, level: number): unknown => {
    if (typeof value === "string") return storableText(value)
    if (typeof value !== "object" || value === null) return value
    if (level > MAX_NESTING_DEPTH) return DEEPER_THAN_LIMIT
    const target = Array.isArray(value) ? [] : {}
    work.push([value, target, level])
    return target
  }
  const copied = copyOf(root, 1) as object
  while (work.length > 0) {
    const [source, target, level] = work.pop()!
    if (Array.isArray(source)) {
      for (let index = 0; index < source.length; index++) (target as Array<unknown>).push(copyOf(source[index], level + 1))
      continue
    }
    for (const key in source) {
      if (Object.hasOwn(source, key)) {
        setOwn(target as Record<string, unknown>, storableText(key), copyOf((source as Record<string, unknown>)[key], level + 1))
      }
    }
  }
  return copied
}

/**
 * `value`, a JSON value (objects, arrays, strings, numbers, booleans, null; no cycles), with each
 * NUL and each unpaired surrogate half in its strings and property names replaced by U+FFFD, and
 * each array or object at level MAX_NESTING_DEPTH + 1 (`value` is level 1) by DEEPER_THAN_LIMIT.
 * `value` itself when nothing needs replacing, after a scan of its strings (a test of a character
 * class each) and without allocating; else a copy, objects and arrays made anew. Two property names
 * of one object that become the same name keep the later value.
 */
export const storableJson = <A>(value: A): A => {
  if (typeof value === "string") return storableText(value) as A
  if (typeof value !== "object" || value === null || !holdsUnstorable(value)) return value
  return storableCopy(value) as A
}
