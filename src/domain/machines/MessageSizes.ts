/**
 * How large the messages of the machine WebSocket may be (docs/daemon-protocol.md, "Message
 * sizes"): the most a daemon's outcome may take, and the largest frame each side reads. Each
 * frame limit is a little above the largest message the other side legitimately sends, so that a
 * peer sending more is closed with 1009 (the `ws` library's "message too big") when the frame's
 * header is read, before its payload is buffered: without a limit, `ws` took frames of up to
 * 100 MiB, and one organization's daemon sending 90 MB frames slowed every other tenant's
 * requests to 100-460 ms for 25 s. Each side also checks what it sends, so that it never sends a
 * message the other refuses (a refused message sent again after every reconnect would loop).
 */
import { base64Length } from "./MachineFiles.ts"
import { CHECKPOINT_MAX_BYTES } from "./WorkspaceOperations.ts"

const MiB = 1024 * 1024

/**
 * The most bytes (UTF-8, as JSON) a daemon's outcome may take, by operation: room for what the
 * output's schema caps (a tool's output as the daemon cuts it, a file or a checkpoint at its
 * maximum in base64, a text file of control characters escaped six bytes each) and for what it
 * does not (paths, a failure's message, keys the schema ignores). The server stores a larger one
 * as a failure (MachineResults.ts). A request's row holds its operation and this outcome:
 * MAX_MESSAGE_BYTES (layers/Database.ts) sizes the database client's largest message by it.
 */
export const OUTCOME_MAX_BYTES = { tool: 2 * MiB, other: 64 * MiB } as const

/**
 * What a `result` adds to its outcome: `"type":"result"` and a request id of at most 128
 * characters (under 200 bytes), rounded up.
 */
const RESULT_ENVELOPE_BYTES = 1024

/**
 * The largest frame the server reads from a daemon. The largest message a daemon legitimately
 * sends is a result, and the largest result a `file.read` of a 10 MiB text of control
 * characters, escaped six bytes each: 60 MiB and its path. A result is stored only when its
 * outcome takes at most OUTCOME_MAX_BYTES.other; a larger frame could carry nothing the server
 * keeps. The other messages (hello, heartbeat, refresh_token) are far smaller.
 */
export const DAEMON_MESSAGE_MAX_BYTES = OUTCOME_MAX_BYTES.other + RESULT_ENVELOPE_BYTES

/**
 * The largest frame a daemon reads from the server. The largest request the server sends is a
 * `checkpoint.restore` of a checkpoint of CHECKPOINT_MAX_BYTES in base64 (42.7 MiB) with its
 * workspace's place; the next, a `file.write` of the files route (its body, at most 10 MiB in
 * base64 and 64 KiB more) and a tool call (its input is the model's, of an answer of at most
 * 8 MiB). 1 MiB of room for the rest of a request (paths, names, an environment). The server
 * fails a request larger than this instead of sending it (MachineSessions.ts).
 */
export const SERVER_MESSAGE_MAX_BYTES = base64Length(CHECKPOINT_MAX_BYTES) + MiB
