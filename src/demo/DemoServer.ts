/**
 * The demo model's HTTP routes, in the OpenAI formats the platform calls (docs/demo-model.md):
 * `POST /v1/responses` and `POST /v1/chat/completions`, streamed (Server-Sent Events, as OpenAI
 * streams them) or whole, plus `GET /v1/models`. Any API key, or none, is accepted. Each answer
 * is logged as one line.
 */
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Console, Effect, Stream } from "effect"
import type { ApiFormat } from "../domain/configuration/ModelProviderConfigs.ts"
import { demoAnswer, WORD_DELAY } from "./DemoModel.ts"
import { readDemoRequest } from "./DemoRequest.ts"
import { estimatedUsage, type ModelAnswer, words } from "./wire/ModelAnswer.ts"
import { chatStream, chatWhole } from "./wire/OpenAiChatEncoding.ts"
import { responsesStream, responsesWhole } from "./wire/OpenAiResponsesEncoding.ts"
import { errorBody } from "./wire/ProviderErrors.ts"

/** The model slug `GET /v1/models` lists; any slug is answered the same way. */
export const DEMO_MODEL_SLUG = "demo"

const failure = (status: number, message: string) =>
  HttpServerResponse.jsonUnsafe(errorBody("openai-responses", status, message), { status })

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const summary = (answer: ModelAnswer) =>
  answer.output.map((part) => part.type === "tool_call" ? `tool call ${part.name}` : part.type).join(", ")

const answer = (format: ApiFormat) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const body = yield* Effect.orElseSucceed(request.json, () => undefined)
    if (!isObject(body)) return failure(400, "The request body is not a JSON object.")
    const demo = readDemoRequest(format, body)
    const { output, slow } = demoAnswer(demo)
    const modelAnswer: ModelAnswer = {
      output,
      usage: estimatedUsage(body, output),
      stop: "end_turn",
      model: demo.model,
      includeEncrypted: demo.includeEncrypted,
      ...(slow ? { split: words } : {})
    }
    yield* Console.log(`${request.method} ${request.url}${demo.stream ? " (streamed)" : ""}: ${summary(modelAnswer)}${slow ? ", slowly" : ""}`)
    if (!demo.stream) {
      return HttpServerResponse.jsonUnsafe(format === "openai-responses" ? responsesWhole(modelAnswer) : chatWhole(modelAnswer))
    }
    const chunks = format === "openai-responses" ? responsesStream(modelAnswer) : chatStream(modelAnswer, demo.includeUsage)
    return HttpServerResponse.stream(
      Stream.fromIterable(chunks).pipe(
        Stream.mapEffect((chunk) => chunk.delta && slow ? Effect.as(Effect.sleep(WORD_DELAY), chunk.sse) : Effect.succeed(chunk.sse)),
        Stream.encodeText
      ),
      { contentType: "text/event-stream", headers: { "cache-control": "no-cache" } }
    )
  })

const models = HttpServerResponse.jsonUnsafe({
  object: "list",
  data: [{ id: DEMO_MODEL_SLUG, object: "model", created: 0, owned_by: "agent-platform-demo" }]
})

/** Any other request: a 404 in OpenAI's error shape, naming what the demo model serves. */
const unknownRoute = Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
  failure(404, `Unknown request URL: ${request.method} ${request.url}. The demo model serves POST /v1/responses and POST /v1/chat/completions.`))

export const DemoRoutes = HttpRouter.addAll([
  HttpRouter.route("POST", "/v1/responses", answer("openai-responses")),
  HttpRouter.route("POST", "/v1/chat/completions", answer("openai-chat-completions")),
  HttpRouter.route("GET", "/v1/models", Effect.succeed(models)),
  // The router prefers every route above to this one.
  HttpRouter.route("*", "*", unknownRoute)
])
