/**
 * A user's settings (docs/user-settings.md): one JSON document per user, changed by a deep merge
 * (`PATCH /api/v1/user/settings`). `UserSettings` is the stored document and the answer, with
 * its defaults in place; `UserSettingsPatch` is the request body, where `null` removes a key.
 */
import { Schema } from "effect"
import { optional } from "../shared/Optional.ts"
import { Email } from "../tenancy/Users.ts"

/** When the mobile app notifies: after every turn, only when an agent waits for the user, never. */
export const MobileNotificationMode = Schema.Literals(["all", "needs_attention", "off"])
/** Where a new worktree is made by default: on the user's machine or in a pool sandbox. */
export const WorktreeMode = Schema.Literals(["LOCAL", "REMOTE"])
/** How freely the coding agent acts: asks before every change, edits files freely, plans only, acts freely. */
export const CodeMode = Schema.Literals(["ask", "accept_edits", "plan", "auto"])
/** The reasoning effort asked of a provider's model. */
export const Thinking = Schema.Literals(["none", "low", "medium", "high"])
/**
 * A key of `code.providers`: the name of a model provider config in one of the user's
 * organizations, which the service looks up. An empty one is let through to that lookup, which
 * refuses it as any name no config has, naming those the user's organizations have (here it was
 * refused as "not allowed here", saying neither why nor what to send).
 */
const ProviderEntryKey = Schema.String.pipe(
  Schema.check(Schema.isMaxLength(64, { message: "must be at most 64 characters" })),
  // A JavaScript object cannot hold this key as data: it would be dropped instead of stored.
  Schema.check(Schema.makeFilter((key) => key !== "__proto__" || "is not a usable provider identifier"))
)
/** A provider identifier: the name of a model provider config in one of the user's organizations. */
export const ProviderKey = ProviderEntryKey.pipe(Schema.check(Schema.isMinLength(1, { message: "must not be empty" })))
/** The name of a configured model under the provider config the entry is keyed by. */
export const ModelName = Schema.String.pipe(
  Schema.check(Schema.isMinLength(1, { message: "must not be empty" })),
  Schema.check(Schema.isMaxLength(64, { message: "must be at most 64 characters" }))
)
/** `auto` (detect) or a BCP 47 language tag: `en`, `en-US`, `pt-BR`, `zh-Hant-TW`, `es-419`. */
export const VoiceLanguage = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^(auto|[a-z]{2,3}(-[A-Z][a-z]{3})?(-([A-Z]{2}|[0-9]{3}))?)$/u, {
    message: "must be auto or a BCP 47 language tag such as en, en-US or pt-BR"
  }))
)
/** E.164: a plus sign, then 8 to 15 digits. */
export const PhoneNumber = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^\+[1-9][0-9]{7,14}$/u, { message: "must be a phone number in E.164 form, such as +14155550123" }))
)
/** At most this many entries in `code.providers`. */
export const MAX_PROVIDERS = 32

const ProviderSettings = Schema.Struct({
  model: optional(ModelName),
  thinking: optional(Thinking)
})

export const UserSettings = Schema.Struct({
  notifications: Schema.Struct({
    mobile: optional(Schema.Struct({ mode: optional(MobileNotificationMode) })),
    email: Schema.Struct({ enabled: Schema.Boolean, notification_email: optional(Email) }),
    sms: Schema.Struct({ enabled: Schema.Boolean, phone_number: optional(PhoneNumber) })
  }),
  git: optional(Schema.Struct({ default_worktree_mode: optional(WorktreeMode) })),
  code: optional(Schema.Struct({
    mode: optional(CodeMode),
    default_provider: optional(ProviderKey),
    providers: optional(Schema.Record(ProviderEntryKey, ProviderSettings))
  })),
  voice: optional(Schema.Struct({ language: optional(VoiceLanguage) }))
}).annotate({ identifier: "UserSettings" })
export type UserSettings = typeof UserSettings.Type

/** The settings of a user who never changed any. */
export const DEFAULT_USER_SETTINGS: UserSettings = {
  notifications: { email: { enabled: false }, sms: { enabled: false } }
}

/** A key of a patch: absent leaves it, `null` removes it (a default comes back), a value sets it. */
const patched = <S extends Schema.Top>(schema: S) => optional(Schema.NullOr(schema))

export const UserSettingsPatch = Schema.Struct({
  notifications: patched(Schema.Struct({
    mobile: patched(Schema.Struct({ mode: patched(MobileNotificationMode) })),
    email: patched(Schema.Struct({ enabled: patched(Schema.Boolean), notification_email: patched(Email) })),
    sms: patched(Schema.Struct({ enabled: patched(Schema.Boolean), phone_number: patched(PhoneNumber) }))
  })),
  git: patched(Schema.Struct({ default_worktree_mode: patched(WorktreeMode) })),
  code: patched(Schema.Struct({
    mode: patched(CodeMode),
    default_provider: patched(ProviderKey),
    providers: patched(
      Schema.Record(ProviderEntryKey, Schema.NullOr(Schema.Struct({ model: patched(ModelName), thinking: patched(Thinking) }))).pipe(
        // More set at once could never be stored: refused before any of them is looked up.
        Schema.check(Schema.makeFilter((providers) => {
          const set = Object.values(providers).filter((entry) => entry !== null).length
          return set <= MAX_PROVIDERS || `must configure at most ${MAX_PROVIDERS} providers (got ${set})`
        }))
      )
    )
  })),
  voice: patched(Schema.Struct({ language: patched(VoiceLanguage) }))
}).annotate({ identifier: "UserSettingsPatch" })
export type UserSettingsPatch = typeof UserSettingsPatch.Type

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
const isObject = (value: unknown): value is { readonly [key: string]: Json } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A JSON merge patch (RFC 7396): objects merge key by key, `null` removes the key, anything else
 * replaces what was there.
 */
export const mergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isObject(patch)) return patch
  // A Map, so that a key such as `__proto__` stays an ordinary key.
  const merged = new Map<string, unknown>(Object.entries(isObject(target) ? target : {}))
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) merged.delete(key)
    else merged.set(key, mergePatch(merged.get(key), value))
  }
  return Object.fromEntries(merged)
}

/** The document with its defaults filled in where a key is missing. */
export const withDefaults = (document: unknown): unknown => {
  const root = isObject(document) ? document : {}
  const notifications = isObject(root.notifications) ? root.notifications : {}
  const channel = (value: unknown) => {
    const settings = isObject(value) ? value : {}
    return { ...settings, enabled: settings.enabled ?? false }
  }
  return {
    ...root,
    notifications: { ...notifications, email: channel(notifications.email), sms: channel(notifications.sms) }
  }
}
