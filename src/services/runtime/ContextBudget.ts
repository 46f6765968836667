/**
 * The context window rule (docs/runtime.md "Compaction"): the estimated input of a
 * model request must fit the window minus the output reserve (the request's output cap, or a
 * quarter of the window up to DEFAULT_OUTPUT_RESERVE when it has none) and a safety reserve
 * (SAFETY_RESERVE_RATIO of the window). Input is estimated at CHARS_PER_TOKEN characters of its
 * JSON per token: providers count differently, so the estimate is deliberately simple and the
 * safety reserve absorbs its error.
 */
import type { ConversationItem, ModelRequest } from "./model/ModelMessages.ts"

export const CHARS_PER_TOKEN = 4
const DEFAULT_OUTPUT_RESERVE = 4096
const SAFETY_RESERVE_RATIO = 0.05

export interface Budget {
  readonly contextWindow: number
  readonly outputReserve: number
  readonly safetyReserve: number
  /** What the input may use. */
  readonly input: number
}

export const budgetOf = (contextWindow: number, maxOutputTokens: number | undefined): Budget => {
  const outputReserve = maxOutputTokens ?? Math.min(DEFAULT_OUTPUT_RESERVE, Math.floor(contextWindow / 4))
  const safetyReserve = Math.ceil(contextWindow * SAFETY_RESERVE_RATIO)
  return { contextWindow, outputReserve, safetyReserve, input: contextWindow - outputReserve - safetyReserve }
}

/**
 * The length of a conversation item's JSON. The model's view adds up the ended turns' lengths as
 * they end (Conversation.ts, `settledItemsLength`), so a step measures only what is new instead of
 * writing out the whole conversation again.
 */
export const itemLength = (item: ConversationItem) => JSON.stringify(item).length

/**
 * `JSON.stringify(items).length` of `count` items whose `itemLength`s add up to `itemsLength`: the
 * brackets and a comma between two items.
 */
export const arrayLength = (count: number, itemsLength: number) => count === 0 ? 2 : count + 1 + itemsLength

/** `JSON.stringify(items).length`, from the items' lengths. */
export const conversationLength = (items: ReadonlyArray<ConversationItem>) => {
  let itemsLength = 0
  for (const item of items) itemsLength += itemLength(item)
  return arrayLength(items.length, itemsLength)
}

/**
 * The estimated input tokens of a request: its instruction and tools, and a conversation whose
 * JSON is `conversationLength` characters long (a model call's, Conversation.conversationOf, is
 * measured as its turns end, not again at every call).
 */
export const estimateInputTokens = (request: Pick<ModelRequest, "instruction" | "tools">, conversationLength: number): number =>
  Math.ceil((request.instruction.length + conversationLength + JSON.stringify(request.tools).length) / CHARS_PER_TOKEN)

export const describeOverflow = (estimate: number, budget: Budget) =>
  `The request does not fit the model's context window even after compacting earlier turns: about ${estimate} ` +
  `input tokens estimated, ${budget.input} available (a window of ${budget.contextWindow} tokens minus ` +
  `${budget.outputReserve} reserved for output and ${budget.safetyReserve} for safety). Start a new agent, ` +
  `send a shorter input, or use a model with a larger context window.`
