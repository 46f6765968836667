/**
 * The parse options of a request body that takes no property it does not list: an unknown
 * property is `invalid_request` instead of being dropped.
 *
 * Effect 3 read them from a schema's `parseOptions` annotation (and applied them to everything
 * inside it); Effect 4 has no such annotation. Every request body is such a body, so the Api
 * sets them for all payloads (`.annotate(HttpApi.PayloadParseOptions, strict)`), and code that
 * decodes such a document itself passes them to the decoder.
 */
export const strict = { onExcessProperty: "error" } as const
