/**
 * Where a streaming JSON scan is: one entry per open container (an object's current key and the
 * keys it has had, an array's current index), and the first bytes of the string being read.
 * Strings are kept as their raw bytes (one character per byte) and decoded only when a problem
 * names them or an escape makes two spellings of one key; plain arrays, since a scan lives as
 * long as one request and most bodies are a few levels deep.
 */

/** Bytes kept of a key: enough to name it in a problem and to recognise the keys a scan looks for. */
const KEY_HEAD_BYTES = 256
/** Bytes kept of a string value: enough to recognise the short values a scan looks for (`"media"`). */
const VALUE_HEAD_BYTES = 16

/** Keys an object may have before its keys are kept in a Set rather than a list (see `keyLists`). */
const SMALL_OBJECT_KEYS = 16

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
  /**
   * The keys each open object has had, whole and unescaped (`keyText`): a list while the object
   * is small (most are; comparing a few short strings costs less than hashing them), a Set once
   * it has more than SMALL_OBJECT_KEYS. Reused from object to object at each depth.
   */
  private readonly keyLists: Array<Array<string> | undefined> = [undefined]
  private readonly keySets: Array<Set<string> | undefined> = [undefined]
  private head = ""
  private headFlags = 0
  private headLimit = KEY_HEAD_BYTES
  private inKey = false
  /** The bytes of the current key past its head (a key longer than KEY_HEAD_BYTES). */
  private keyRest: Array<Uint8Array> = []
  /** The last two bytes of the current string: `last` and the one before it. */
  private last = 0
  private beforeLast = 0

  push(isObject: boolean) {
    const depth = ++this.depth
    this.objects[depth] = isObject
    this.indexes[depth] = 0
    this.keys[depth] = ""
    this.keyFlags[depth] = 0
    if (isObject) {
      const list = this.keyLists[depth]
      if (list === undefined) this.keyLists[depth] = []
      else list.length = 0
      this.keySets[depth] = undefined
    }
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

  /** The index of the current element of the array at `depth`: the commas read in it so far. */
  indexAt(depth: number): number {
    return this.indexes[depth]
  }

  /** Whether the current key of the object at `depth` is `name` (ASCII). */
  keyIs(depth: number, name: string): boolean {
    return matches(this.keys[depth], this.keyFlags[depth], name)
  }

  startString(isKey: boolean) {
    this.headLimit = isKey ? KEY_HEAD_BYTES : VALUE_HEAD_BYTES
    this.inKey = isKey
    if (isKey && this.keyRest.length > 0) this.keyRest = []
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
    if (end - start > room) {
      this.headFlags |= TRUNCATED
      if (this.inKey) this.keyRest.push(Buffer.from(bytes.subarray(start + room, end)))
    }
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

  /**
   * The string just read becomes the current key of the innermost object. False when the object
   * had this key already (however it was spelled: `"a"` and `"\u0061"` are one key).
   */
  setKeyFromString(): boolean {
    const depth = this.depth
    this.keys[depth] = this.head
    this.keyFlags[depth] = this.headFlags
    const text = this.headFlags === 0 ? this.head : this.keyText()
    const set = this.keySets[depth]
    if (set !== undefined) {
      if (set.has(text)) return false
      set.add(text)
      return true
    }
    const list = this.keyLists[depth]!
    for (let i = 0; i < list.length; i++) {
      if (list[i] === text) return false
    }
    if (list.length < SMALL_OBJECT_KEYS) list.push(text)
    else this.keySets[depth] = new Set(list).add(text)
    return true
  }

  /**
   * The whole key just read as its UTF-8 bytes one per character, escapes resolved, so that two
   * spellings of one key are the same text. Plain keys (the usual case) are their raw head.
   */
  private keyText(): string {
    let raw = this.head
    if (this.headFlags & TRUNCATED) raw += Buffer.concat(this.keyRest).toString("latin1")
    if (!(this.headFlags & ESCAPED)) return raw
    // Escapes were checked by the scanner; JSON.parse resolves them.
    const key = JSON.parse(`"${Buffer.from(raw, "latin1").toString("utf8")}"`) as string
    return Buffer.from(key, "utf8").toString("latin1")
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
