/**
 * Another agent server measured beside this one by bench/competitors.ts: where its packages and
 * entry are, and how a client holds a conversation with its agent over HTTP. Each competitor is a
 * directory of its own (package.json, package-lock.json, the server as a user would deploy it),
 * installed with `npm ci` on first use, and a module that speaks its REST API with `fetch`.
 */
export interface Competitor {
  /** Its name in the rows. */
  readonly name: string
  /** The directory of its package.json and package-lock.json, from the repository's root. */
  readonly directory: string
  /**
   * Its server, from the repository's root: started as `node <entry>` in `directory`, with PORT,
   * MODEL_BASE_URL (an OpenAI-compatible base URL), MODEL_API_KEY and DATA_DIR in its environment.
   */
  readonly entry: string
  /** A path that answers 200 once the server is ready. */
  readonly readyPath: string
  /** A new conversation (thread) with the agent: its id. */
  readonly newConversation: (baseUrl: string) => Promise<string>
  /** One turn: sends `text` and resolves once the agent's answer is returned and stored in the conversation. */
  readonly turn: (baseUrl: string, conversationId: string, text: string) => Promise<void>
  /** How many messages (the user's and the agent's) the server has stored for the conversation. */
  readonly storedMessages: (baseUrl: string, conversationId: string) => Promise<number>
}
