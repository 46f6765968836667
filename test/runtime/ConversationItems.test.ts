/**
 * A conversation's items kept as JSON lines, the last ones appended as objects
 * (src/services/runtime/model/ConversationItems.ts): read back from any index, they are the items
 * appended, in order, with texts JSON escapes and long enough to fill several chunks of the
 * ByteLog; items made from the same items each keep their own.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConversationItems } from "../../src/services/runtime/model/ConversationItems.ts"
import type { ConversationItem } from "../../src/services/runtime/model/ModelMessages.ts"

const text = (value: string) => [{ type: "text" as const, text: value }]

/** A turn's items: texts with newlines, quotes, U+2028, astral characters and lone surrogates, some of several KiB. */
const turn = (index: number): ReadonlyArray<ConversationItem> => [
  { type: "user_message", content: text(`${index} line\nbreak "quoted" \u2028 😀 lone \ud800 ${"é".repeat(index * 97)}`) },
  { type: "assistant_reasoning", summary: "thinking", replay: { api_format: "anthropic-messages", kind: "signature", data: `s${index}` } },
  { type: "tool_call", call_id: `call_${index}`, name: "lookup", input: { q: index, nested: { list: [index, "\udc00"] } } },
  { type: "tool_result", call_id: `call_${index}`, outcome: index % 2 === 0 ? "succeeded" : "failed", content: text("found") },
  { type: "assistant_text", text: `answer ${index} ${"x".repeat(index * 211)}` }
]

/** Every read of `items` from an index equals the same slice of `expected`. */
const expectItems = (items: ConversationItems, expected: ReadonlyArray<ConversationItem>) => {
  expect(items.length).toBe(expected.length)
  for (let index = 0; index <= expected.length; index++) expect(items.from(index)).toEqual(expected.slice(index))
}

describe("a conversation's items", () => {
  it("read back from any index are the items appended turn after turn, in order", () => {
    let items = ConversationItems.empty
    let expected: ReadonlyArray<ConversationItem> = []
    for (let index = 0; index < 40; index++) {
      items = items.settledWith(turn(index))
      expected = [...expected, ...turn(index)]
      if (index === 0 || index === 13 || index === 39) expectItems(items, expected)
    }
    expect(items.toArray()).toEqual(expected)
  })

  it("made from the same items, each keeps its own, and a call's items change none of them", () => {
    const base = ConversationItems.of(turn(1)).settledWith(turn(2)).settledWith(turn(3))
    const left = base.settledWith(turn(4)).settledWith(turn(5))
    const right = base.settledWith(turn(6)).settledWith(turn(7))
    const call = right.then(turn(8))
    const more = left.settledWith(turn(9))
    const past = [...turn(1), ...turn(2), ...turn(3)]
    expectItems(base, past)
    expectItems(left, [...past, ...turn(4), ...turn(5)])
    expectItems(right, [...past, ...turn(6), ...turn(7)])
    expectItems(call, [...past, ...turn(6), ...turn(7), ...turn(8)])
    expectItems(more, [...past, ...turn(4), ...turn(5), ...turn(9)])
    expectItems(ConversationItems.empty, [])
  })
})
