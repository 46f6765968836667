/** Secrets a caller presents to authenticate: API keys, daemon and pool machine tokens, a browser session's cookie and CSRF token. */
import { randomBytes } from "node:crypto"

/**
 * A new token: `prefix` (which names the token's kind, "apk_" for an API key; empty for a
 * browser session's) and 32 random bytes, base64url. Shown once; the platform stores its SHA-256.
 */
export const newBearerToken = (prefix: string): string => prefix + randomBytes(32).toString("base64url")
