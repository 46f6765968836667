/**
 * Where a streaming JSON scan is: one entry per open container (an object's current key, an
 * array's current index) in fixed-size arrays, and the first bytes of the string being read.
 * Keys are kept as their raw bytes and decoded only when a problem names them.
 */

/** Bytes of a string kept: enough for any key or short value the scan needs to recognise. */
const HEAD_BYTES = 256

const utf8 = new TextDecoder()

interface RawText {
  readonly bytes: Uint8Array
  readonly escaped: boolean
  readonly truncated: boolean
}

const decode = ({ bytes, escaped, truncated }: RawText): string => {
  const text = utf8.decode(bytes)
  // Escapes were checked by the scanner; JSON.parse resolves them. A truncated head may end
  // inside an escape, so it is shown as written.
  const decoded = escaped && !truncated ? JSON.parse(`"${text}"`) as string : text
  return truncated ? decoded + "…" : decoded
}

const matches = (raw: RawText, ascii: string): boolean => {
  if (raw.escaped || raw.truncated) return !raw.truncated && decode(raw) === ascii
  if (raw.bytes.length !== ascii.length) return false
  for (let i = 0; i < ascii.length; i++) if (raw.bytes[i] !== ascii.charCodeAt(i)) return false
  return true
}

const EMPTY: RawText = { bytes: new Uint8Array(0), escaped: false, truncated: false }

export class JsonPath {
  /** Open containers; entry 0 is the top level, outside any container. */
  depth = 0
  private readonly objects: Uint8Array
  private readonly indexes: Float64Array
  private readonly keys: Array<RawText>
  private readonly head = new Uint8Array(HEAD_BYTES)
  private headLength = 0
  private headEscaped = false
  private headTruncated = false
  /** The last two bytes of the current string: `last` and the one before it. */
  private last = 0
  private beforeLast = 0

  constructor(maxDepth: number) {
    this.objects = new Uint8Array(maxDepth + 1)
    this.indexes = new Float64Array(maxDepth + 1)
    this.keys = new Array<RawText>(maxDepth + 1).fill(EMPTY)
  }

  push(isObject: boolean) {
    this.depth++
    this.objects[this.depth] = isObject ? 1 : 0
    this.indexes[this.depth] = 0
    this.keys[this.depth] = EMPTY
  }

  pop() {
    this.depth--
  }

  isObject(depth: number): boolean {
    return this.objects[depth] === 1
  }

  /** The index of the current element of the array at `depth`. */
  index(depth: number): number {
    return this.indexes[depth]
  }

  nextIndex() {
    this.indexes[this.depth]++
  }

  /** Whether the current key of the object at `depth` is `name` (ASCII). */
  keyIs(depth: number, name: string): boolean {
    return matches(this.keys[depth], name)
  }

  startString() {
    this.headLength = 0
    this.headEscaped = false
    this.headTruncated = false
    this.last = 0
    this.beforeLast = 0
  }

  /** Keeps `bytes[start, end)` of the current string, up to HEAD_BYTES in all. */
  collect(bytes: Uint8Array, start: number, end: number) {
    if (end > start) {
      this.beforeLast = end - start >= 2 ? bytes[end - 2] : this.last
      this.last = bytes[end - 1]
    }
    const room = HEAD_BYTES - this.headLength
    if (end - start > room) this.headTruncated = true
    if (room <= 0 || end <= start) return
    const stop = Math.min(end, start + room)
    this.head.set(bytes.subarray(start, stop), this.headLength)
    this.headLength += stop - start
  }

  markEscaped() {
    this.headEscaped = true
  }

  /** How many `=` end the string just read (the padding of base64 text). */
  trailingEquals(): number {
    return this.last !== 0x3d ? 0 : this.beforeLast === 0x3d ? 2 : 1
  }

  /** The string just read becomes the current key of the innermost object. */
  setKeyFromString() {
    this.keys[this.depth] = this.headText()
  }

  /** Whether the string just read is `value` (ASCII). */
  stringIs(value: string): boolean {
    return matches(this.headText(), value)
  }

  /** The JSON Pointer (RFC 6901) of the current value; without the innermost key when `withInnermostKey` is false. */
  pointer(withInnermostKey = true): string {
    let pointer = ""
    for (let depth = 1; depth <= this.depth; depth++) {
      if (this.objects[depth] === 0) pointer += "/" + this.indexes[depth]
      else if (depth < this.depth || withInnermostKey) {
        pointer += "/" + decode(this.keys[depth]).replaceAll("~", "~0").replaceAll("/", "~1")
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

  private headText(): RawText {
    return { bytes: this.head.slice(0, this.headLength), escaped: this.headEscaped, truncated: this.headTruncated }
  }
}
