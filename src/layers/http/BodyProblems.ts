/**
 * What the scanner says when it refuses a body: `invalid_request` naming the field by its JSON
 * Pointer where there is one (syntax errors give a line and column instead), never the value.
 */
import { InvalidRequest, type RequestTimeout, type RequestTooLarge } from "../../domain/shared/Errors.ts"

/** Why a body is refused. */
export type BodyProblem = InvalidRequest | RequestTimeout | RequestTooLarge

/** A problem with one field of the body (the whole body when `path` is undefined). */
export const invalid = (error: string, path?: string, message?: string): InvalidRequest =>
  new InvalidRequest(path === undefined ? { error } : { error, issues: [{ path, message: message ?? error }] })

const hex4 = (code: number) => "\\u" + code.toString(16).padStart(4, "0")

export const tooDeep = (pointer: string, maxDepth: number) =>
  invalid(
    `The request body nests arrays and objects deeper than ${maxDepth} levels`,
    pointer,
    `nests deeper than ${maxDepth} levels`
  )

export const nulCharacter = (pointer: string) =>
  invalid(
    "The body contains a NUL character (\\u0000) in a string; text cannot hold it. " +
      "Remove it, or send binary data as base64",
    pointer,
    "must not contain a NUL character (\\u0000)"
  )

/** `inKey`: the surrogate is in a property name of the object at `pointer`. */
export const unpairedSurrogate = (pointer: string, code: number, inKey: boolean) =>
  invalid(
    `The request body holds an unpaired UTF-16 surrogate escape (${hex4(code)}) in ${
      inKey ? "a property name" : "a string"
    }; text cannot hold it`,
    pointer,
    `${inKey ? "has a property name that contains" : "contains"} an unpaired surrogate escape (${hex4(code)}); ` +
      "write a character outside the Basic Multilingual Plane as a pair such as \\ud83d\\ude00"
  )

/** `pointer` names the key: the object holding it, then the key. */
export const duplicateKey = (pointer: string) =>
  invalid(
    `The request body gives the property ${pointer} more than once; give each property of an object once`,
    pointer,
    "is given more than once in its object; give it once"
  )

/** `pointer` names the key: the object holding it, then `__proto__`. */
export const protoKey = (pointer: string) =>
  invalid(
    `The request body has a property named __proto__ at ${pointer}, which is not accepted ` +
      "(a JavaScript object cannot hold it as data); rename the property",
    pointer,
    "__proto__ is not accepted as a property name; rename the property"
  )

export const notUtf8 = (pointer: string) => invalid("The request body is not valid UTF-8", pointer, "is not valid UTF-8 text")

export const notJson = (what: string, line: number, column: number, advice?: string) =>
  invalid(`The request body is not valid JSON: ${what} at line ${line}, column ${column}${advice === undefined ? "" : `: ${advice}`}`)

/**
 * A UTF-8 byte order mark before the JSON. RFC 8259 (8.1) forbids sending one and lets a parser
 * ignore it; it is refused, as any byte outside the JSON text, but named, not as a byte 0xef.
 */
export const byteOrderMark = () => notJson("a byte order mark (EF BB BF)", 1, 1, "send the JSON without it")

export const unexpectedByte = (byte: number) =>
  `an unexpected ${byte >= 0x21 && byte < 0x7f ? `'${String.fromCharCode(byte)}'` : `byte 0x${byte.toString(16)}`}`
