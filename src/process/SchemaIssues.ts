/**
 * A schema's refusal as one line for a person to read: a command-line flag's value, the cluster
 * pools file, a machine tool's input. (An API answer lists its issues with JSON pointers instead,
 * layers/http/DecodeIssues.ts.)
 */
import { type Schema, SchemaIssue } from "effect"
import { listedOf } from "../domain/shared/ListedIssues.ts"

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/** A path segment of a Standard Schema issue: a key, or an object holding one. */
const segment = (key: PropertyKey | { readonly key: PropertyKey }) => String(typeof key === "object" ? key.key : key)

/**
 * Each issue as `path: message` (`files.0.path: Expected string`), the message alone for the value
 * itself, joined by `; `: the first MAX_LISTED_ISSUES, and how many more there were.
 */
export const describeIssues = (error: Schema.SchemaError): string => {
  const { listed, more } = listedOf(formatIssues(error.issue).issues)
  const described = listed.map((issue) => {
    const message = issue.message.replaceAll("\n", " ")
    return issue.path === undefined || issue.path.length === 0 ? message : `${issue.path.map(segment).join(".")}: ${message}`
  })
  return `${described.join("; ")}${more}`
}
