/**
 * What one turn may make a model do (docs/runtime.md, "Limits of a turn"): a model that never
 * stops calling tools ends its turn `failed` with an error saying what happened and what to do,
 * instead of running until the context window overflows. (An answer of thousands of tool calls
 * at once is stopped by the model call itself: MAX_TOOL_CALLS_PER_ANSWER, ModelCallLimits.ts.)
 */

/**
 * The most model calls (steps) one turn makes, by default (AGENT_PLATFORM_MAX_TURN_STEPS sets
 * another). A coding agent that runs a command per step and a few hundred commands for a task
 * stays under it; a model stuck calling a tool that fails at once reached 1,670 calls in 85 s,
 * each request bigger than the last.
 */
export const MAX_MODEL_CALLS_PER_TURN = 500

/** The error of a turn that used its model calls. */
export const stepLimitError = (limit: number) =>
  `The turn stopped after ${limit} model calls, the most one turn may make: the model kept calling tools. ` +
  `Its calls and their results are kept; send a new input to continue from there.`

