// The agent graph the LangGraph.js Agent Server serves as `bench` (langgraph.json): a ReAct agent
// with no tools on an OpenAI-compatible chat model (chat completions) at MODEL_BASE_URL.
import { ChatOpenAI } from "@langchain/openai"
import { createReactAgent } from "@langchain/langgraph/prebuilt"

const model = new ChatOpenAI({
  model: "bench-1",
  apiKey: process.env.MODEL_API_KEY,
  configuration: { baseURL: process.env.MODEL_BASE_URL }
})

export const graph = createReactAgent({ llm: model, tools: [], prompt: "Answer briefly." })
