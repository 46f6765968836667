/** Content hashes as `sha256:<64 lowercase hex>` (docs/agent-configs.md, "Hashes"). */
import { createHash } from "node:crypto"

export const sha256 = (text: string): string => "sha256:" + createHash("sha256").update(text, "utf8").digest("hex")
