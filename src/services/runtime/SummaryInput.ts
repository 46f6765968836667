/**
 * What a summary request carries (docs/runtime.md, "Compaction"): the conversation to summarize,
 * cut to fit the same context window as every other call. The history to compact is what no
 * longer fits, so it may itself be too large to send: then each item is cut to at most half of the
 * room (its text's beginning and end kept around a note), and the newest items that fit are kept,
 * after a note saying how many earlier ones were left out.
 */
import { type Budget, CHARS_PER_TOKEN, conversationLength, estimateInputTokens, itemLength } from "./ContextBudget.ts"
import type { ConversationItem, ModelRequest, TextBlock } from "./model/ModelMessages.ts"

/** The text left where the middle of a text was cut out. */
const cutNote = (characters: number) =>
  `\n[… ${characters} characters left out here: the message does not fit the model's context window …]\n`

/** The note in front of the kept items when earlier ones were left out. */
const leftOutNote = (items: number): ConversationItem => ({
  type: "user_message",
  content: [{
    type: "text",
    text: `[The ${items} earliest items of this conversation are left out: they do not fit the model's context window.]`
  }]
})

/** Room the note in front takes, at most (its JSON, with a comma). */
const LEFT_OUT_NOTE_LENGTH = itemLength(leftOutNote(Number.MAX_SAFE_INTEGER)) + 1

/** `text` with the middle cut out, by at least `excess` characters of its JSON. */
const cutText = (text: string, excess: number): string => {
  let cut = excess + cutNote(text.length).length
  for (;;) {
    const kept = Math.max(0, text.length - cut)
    let head = Math.ceil(kept / 2)
    let tail = text.length - (kept - head)
    // Never split a surrogate pair.
    if (head > 0 && isHighSurrogate(text.charCodeAt(head - 1))) head--
    if (tail < text.length && isLowSurrogate(text.charCodeAt(tail))) tail++
    const shortened = text.slice(0, head) + cutNote(tail - head) + text.slice(tail)
    // JSON escapes may make the kept text longer than its characters: cut by what is still over.
    const over = JSON.stringify(shortened).length - (JSON.stringify(text).length - excess)
    if (kept === 0 || over <= 0) return shortened
    cut += over
  }
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff

const joinedText = (blocks: ReadonlyArray<TextBlock>) => blocks.map((block) => block.text).join("\n")

/** `item` with its text (or a tool call's input) cut so that its JSON is at most `limit` characters. */
const shortened = (item: ConversationItem, limit: number): ConversationItem => {
  const excess = itemLength(item) - limit
  if (excess <= 0) return item
  switch (item.type) {
    case "user_message":
      return { type: "user_message", content: [{ type: "text", text: cutText(joinedText(item.content), excess) }] }
    case "tool_result":
      return { ...item, content: [{ type: "text", text: cutText(joinedText(item.content), excess) }] }
    case "assistant_text":
      return { type: "assistant_text", text: cutText(item.text, excess) }
    case "assistant_reasoning":
      // A replay is the provider's own record of the whole reasoning: it goes with the cut.
      return { type: "assistant_reasoning", summary: cutText(item.summary, excess) }
    case "tool_call": {
      const input = JSON.stringify(item.input)
      return {
        ...item,
        input: { left_out: `The call's input (${input.length} characters) does not fit the model's context window.` }
      }
    }
  }
}

/**
 * The conversation of a summary request: `items`, then `request` (the instruction to summarize),
 * within the budget of a request with `instruction` and no tools.
 */
export const summaryConversation = (
  items: ReadonlyArray<ConversationItem>,
  request: ConversationItem,
  instruction: string,
  budget: Budget
): ReadonlyArray<ConversationItem> => {
  const whole = [...items, request]
  const fixed: Pick<ModelRequest, "instruction" | "tools"> = { instruction, tools: [] }
  if (estimateInputTokens(fixed, conversationLength(whole)) <= budget.input) return whole
  const room = (budget.input - estimateInputTokens(fixed, conversationLength([request]))) * CHARS_PER_TOKEN - LEFT_OUT_NOTE_LENGTH
  const itemLimit = Math.floor(room / 2)
  const kept: Array<ConversationItem> = []
  let used = 0
  let next = items.length - 1
  for (; next >= 0; next--) {
    const item = shortened(items[next], itemLimit)
    const length = itemLength(item) + 1
    if (used + length > room) break
    kept.push(item)
    used += length
  }
  kept.reverse()
  return next >= 0 ? [leftOutNote(next + 1), ...kept, request] : [...kept, request]
}
