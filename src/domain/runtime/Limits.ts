/**
 * Size limits of submissions that carry content blocks: tool results, and (the same
 * rules, docs/agents-api.md) agent inputs. Every limit is checked before anything is stored.
 */
const MiB = 1024 * 1024

/** `bytes` in mebibytes for a message, to two decimals at most: "10 MiB", "1.06 MiB". */
export const formatMiB = (bytes: number) => `${Math.round((bytes / MiB) * 100) / 100} MiB`

/** Inline `media` blocks in one submission (more: `invalid_request`). */
export const MAX_INLINE_MEDIA_BLOCKS = 20
/** Decoded bytes of one inline media block. */
export const MAX_MEDIA_BLOCK_BYTES = 10 * MiB
/** Decoded bytes of all inline media blocks of one submission. */
export const MAX_MEDIA_TOTAL_BYTES = 24 * MiB
/** The non-media blocks of one submission together, as JSON (UTF-8 bytes). */
export const MAX_NON_MEDIA_BYTES = 1 * MiB
/**
 * The rest of such a submission's body, as JSON (UTF-8 bytes): what is outside its arrays of
 * blocks (ids, names, metadata) and its media blocks' fields other than `data`. What a valid
 * submission puts there is far smaller (metadata at most 16 KiB a block and one for the agent).
 */
export const MAX_REST_OF_SUBMISSION_BYTES = 1 * MiB
/** The whole request body of a route that accepts inline media. */
export const MAX_MEDIA_REQUEST_BODY_BYTES = 48 * MiB
