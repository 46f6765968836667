/**
 * The request body's JSON, written from parts kept between calls (docs/model-adapters.md, "The
 * request body"). A model call sends the whole conversation every time, and the items of ended
 * turns are the same objects at every later call (TurnHistory keeps them), so each adapter writes
 * an item's wire JSON once and the body is joined from those strings: a call writes out what is
 * new, not the whole conversation again.
 */
import type { ConversationItem } from "./ModelMessages.ts"

/**
 * `write`, run once per item: later calls with the same item object get the first result (the
 * adapters' wire JSON, and the context estimate's item lengths, ContextBudget.ts).
 */
export const oncePerItem = <A>(write: (item: ConversationItem) => A): (item: ConversationItem) => A => {
  const written = new WeakMap<ConversationItem, A>()
  return (item) => {
    let result = written.get(item)
    if (result === undefined) {
      result = write(item)
      written.set(item, result)
    }
    return result
  }
}

/** An object's JSON text with one more field, written last, its value already JSON text. */
const withJsonField = (objectJson: string, key: string, valueJson: string): string =>
  `${objectJson === "{}" ? "{" : `${objectJson.slice(0, -1)},`}${JSON.stringify(key)}:${valueJson}}`

/** `JSON.stringify({ ...fields, [key]: elements })`, where each element is already JSON text. */
export const jsonWithArray = (
  fields: Readonly<Record<string, unknown>>,
  key: string,
  elements: ReadonlyArray<string>
): string => withJsonField(JSON.stringify(fields), key, `[${elements.join(",")}]`)

/** An object's JSON text with one more field, written last. */
export const withField = (objectJson: string, key: string, value: unknown): string =>
  withJsonField(objectJson, key, JSON.stringify(value))
