/** SHA-256, server side: content hashes `sha256:<64 lowercase hex>` (docs/agent-configs.md, "Hashes"). */
import { createHash } from "node:crypto"

/** The 64 lowercase hex characters of the SHA-256 of UTF-8 text or of bytes. */
export const sha256Hex = (content: string | Uint8Array): string => createHash("sha256").update(content).digest("hex")

/** A content hash as the API shows it: `sha256:<hex>`. */
export const sha256 = (content: string | Uint8Array): string => "sha256:" + sha256Hex(content)
