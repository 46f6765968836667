/**
 * What a competitor's client (bench/competitors/*.ts) asks of its server: the JSON answer of a
 * request, failing with the method, the URL, the status and the start of the body on any answer
 * that is not 2xx or not JSON.
 */
export const jsonRequest = async (url: string, init: RequestInit = {}): Promise<unknown> => {
  const response = await fetch(url, init)
  const text = await response.text()
  const what = `${init.method ?? "GET"} ${url}`
  if (!response.ok) throw new Error(`${what} answered ${response.status}: ${text.slice(0, 500)}`)
  try {
    return JSON.parse(text)
  } catch {
    throw new Error(`${what} answered with no JSON: ${text.slice(0, 500)}`)
  }
}

/** The headers of a request with a JSON body. */
export const JSON_HEADERS = { "content-type": "application/json" }
