/**
 * A message as the daemon sends it: its JSON text, never larger than the server reads
 * (DAEMON_MESSAGE_MAX_BYTES, MessageSizes.ts). The server closes the connection (1009) on a frame
 * over it, and a result it never stored is sent again after every reconnect: a result too large
 * would close every connection for ever, and its call would never end. So a result over the
 * limit is sent as the failure `internal_error` naming its size and the limit instead: the server
 * stores and acknowledges it, the call fails with it, and the ledger forgets the result as it
 * forgets any acknowledged one. This daemon's operations cap their outputs far below the limit; the
 * check is for a result kept in the ledger by an older daemon (the state file is loaded as it is).
 * The other messages (hello, heartbeat, refresh_token) are small.
 */
import { Schema } from "effect"
import { type DaemonMessage, DaemonMessageJson } from "../domain/machines/DaemonProtocol.ts"
import { DAEMON_MESSAGE_MAX_BYTES } from "../domain/machines/MessageSizes.ts"

const encode = Schema.encodeSync(DaemonMessageJson)

export const outgoingText = (message: DaemonMessage): string => {
  const text = encode(message)
  if (message.type !== "result") return text
  const bytes = Buffer.byteLength(text)
  if (bytes <= DAEMON_MESSAGE_MAX_BYTES) return text
  return encode({
    type: "result",
    request_id: message.request_id,
    outcome: "failed",
    error: {
      code: "internal_error",
      message: `the result was ${bytes} bytes of JSON; the machine socket carries at most ${DAEMON_MESSAGE_MAX_BYTES}, so it was not sent`
    }
  })
}
