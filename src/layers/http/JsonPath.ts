/**
 * Where a streaming JSON scan is: one entry per open container (an object's current key, an
 * array's current index), and the first bytes of the string being read. Strings are kept as
 * their raw bytes (one character per byte) and decoded only when a problem names them; plain
 * arrays, since a scan lives as long as one request and most bodies are a few levels deep.
 */

/** Bytes kept of a key: enough to name it in a problem and to recognise the keys a scan looks for. */
const KEY_HEAD_BYTES = 256
/** Bytes kept of a string value: enough to recognise the short values a scan looks for (`"media"`). */
const VALUE_HEAD_BYTES = 16

const ESCAPED = 1
const TRUNCATED = 2

/** The text of raw string bytes held one per character (escapes as written, `flags` saying whether there are any). */
const decode = (raw: string, flags: number): string => {
  const text = Buffer.from(raw, "latin1").toString("utf8")
  // Escapes were checked by the scanner; JSON.parse resolves them. A truncated head may end
  // inside an escape, so it is shown as written.
  if (flags & TRUNCATED) return text + "…"
  return flags & ESCAPED ? JSON.parse(`"${text}"`) as string : text
}

const matches = (raw: string, flags: number, ascii: string): boolean =>
  flags === 0 ? raw === ascii : !(flags & TRUNCATED) && decode(raw, flags) === ascii

export class JsonPath {
  /** Open containers; entry 0 is the top level, outside any container. */
  depth = 0
  private readonly objects: Array<boolean> = [false]
  private readonly indexes: Array<number> = [0]
  /** Each object's current key, raw, and its flags. */
  private readonly keys: Array<string> = [""]
  private readonly keyFlags: Array<number> = [0]
  private head = ""
  private headFlags = 0
  private headLimit = KEY_HEAD_BYTES
  /** The last two bytes of the current string: `last` and the one before it. */
  private last = 0
  private beforeLast = 0

  push(isObject: boolean) {
    const depth = ++this.depth
    this.objects[depth] = isObject
    this.indexes[depth] = 0
    this.keys[depth] = ""
    this.keyFlags[depth] = 0
  }

  pop() {
    this.depth--
  }

  isObject(depth: number): boolean {
    return this.objects[depth]
  }

  nextIndex() {
    this.indexes[this.depth]++
  }

  /** Whether the current key of the object at `depth` is `name` (ASCII). */
  keyIs(depth: number, name: string): boolean {
    return matches(this.keys[depth], this.keyFlags[depth], name)
  }

  startString(isKey: boolean) {
    this.headLimit = isKey ? KEY_HEAD_BYTES : VALUE_HEAD_BYTES
    this.head = ""
    this.headFlags = 0
    this.last = 0
    this.beforeLast = 0
  }

  /** Keeps `bytes[start, end)` of the current string, up to its head's limit. */
  collect(bytes: Uint8Array, start: number, end: number) {
    if (end <= start) return
    this.beforeLast = end - start >= 2 ? bytes[end - 2] : this.last
    this.last = bytes[end - 1]
    const room = this.headLimit - this.head.length
    if (end - start > room) this.headFlags |= TRUNCATED
    const stop = Math.min(end, start + room)
    for (let i = start; i < stop; i++) this.head += String.fromCharCode(bytes[i])
  }

  markEscaped() {
    this.headFlags |= ESCAPED
  }

  /** How many `=` end the string just read (the padding of base64 text). */
  trailingEquals(): number {
    return this.last !== 0x3d ? 0 : this.beforeLast === 0x3d ? 2 : 1
  }

  /** The string just read becomes the current key of the innermost object. */
  setKeyFromString() {
    this.keys[this.depth] = this.head
    this.keyFlags[this.depth] = this.headFlags
  }

  /** Whether the string just read is `value` (ASCII). */
  stringIs(value: string): boolean {
    return matches(this.head, this.headFlags, value)
  }

  /** The JSON Pointer (RFC 6901) of the current value; without the innermost key when `withInnermostKey` is false. */
  pointer(withInnermostKey = true): string {
    let pointer = ""
    for (let depth = 1; depth <= this.depth; depth++) {
      if (!this.objects[depth]) pointer += "/" + this.indexes[depth]
      else if (depth < this.depth || withInnermostKey) {
        pointer += "/" + decode(this.keys[depth], this.keyFlags[depth]).replaceAll("~", "~0").replaceAll("/", "~1")
      }
    }
    return pointer
  }

  /** The pointer of the container at `depth` (the path that leads to it). */
  pointerAt(depth: number): string {
    const saved = this.depth
    this.depth = depth - 1
    const pointer = this.pointer()
    this.depth = saved
    return pointer
  }
}
