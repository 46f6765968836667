/**
 * Bytes appended in chunks that never move or grow (a new chunk holds `chunkSize(i)` bytes), so a
 * long conversation's past is neither copied as it grows nor kept with room for as much again
 * (docs/model-adapters.md, "The request body"). Several owners may share one log, each knowing
 * how many of its bytes are its own (a length): only one whose bytes end where the written bytes
 * end appends in place, any other first takes a log of its own sharing the chunks that hold its
 * bytes (the last one cut where they end, so that nothing is written after them).
 */
export interface ByteLog {
  readonly chunks: Array<Buffer>
  written: number
}

/** The first chunk's size in bytes; each next chunk is twice the one before, up to CHUNK_BYTES. */
const FIRST_CHUNK_BYTES = 1024
const CHUNK_BYTES = 64 * 1024

const chunkSize = (index: number) => Math.min(FIRST_CHUNK_BYTES * 2 ** index, CHUNK_BYTES)

export const emptyLog = (): ByteLog => ({ chunks: [], written: 0 })

/** The chunks of `log` holding its first `length` bytes, the last cut to where they end. */
export const prefixChunks = (log: ByteLog, length: number): Array<Buffer> => {
  const chunks: Array<Buffer> = []
  let offset = 0
  for (const chunk of log.chunks) {
    if (offset >= length) break
    chunks.push(offset + chunk.length <= length ? chunk : chunk.subarray(0, length - offset))
    offset += chunk.length
  }
  return chunks
}

/**
 * `bytes` appended after the first `length` bytes of `log`: in place when nothing was written
 * after them, else in a log of its own sharing the chunks that hold them. The log appended to.
 */
export const appendAfter = (log: ByteLog, length: number, bytes: Buffer): ByteLog => {
  const owned = log.written === length ? log : { chunks: prefixChunks(log, length), written: length }
  let from = 0
  let end = owned.chunks.reduce((total, chunk) => total + chunk.length, 0)
  while (from < bytes.length) {
    if (owned.written === end) {
      const chunk = Buffer.allocUnsafeSlow(chunkSize(owned.chunks.length))
      owned.chunks.push(chunk)
      end += chunk.length
    }
    const last = owned.chunks[owned.chunks.length - 1]
    const at = last.length - (end - owned.written)
    const count = Math.min(last.length - at, bytes.length - from)
    bytes.copy(last, at, from, from + count)
    from += count
    owned.written += count
  }
  return owned
}
