/**
 * A user's settings (docs/user-settings.md): read with the defaults in place, changed by a JSON
 * merge patch applied in one transaction with the user's row locked, so concurrent changes both
 * land. The merged document is checked before it is stored: the default provider must be one of
 * the configured providers, an enabled notification channel needs its address, and a provider
 * entry the patch changes must name a provider config (and its model, a model under it) in one of
 * the user's organizations.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { Issue } from "../../domain/shared/Errors.ts"
import { andMore, invalidRequestWith } from "../../domain/shared/ListedIssues.ts"
import type { UserId } from "../../domain/shared/Ids.ts"
import { pointerOf } from "../../domain/shared/JsonPointer.ts"
import {
  DEFAULT_USER_SETTINGS,
  MAX_PROVIDERS,
  mergePatch,
  UserSettings as UserSettingsDocument,
  type UserSettingsPatch,
  withDefaults
} from "../../domain/workspaces/UserSettings.ts"
import { Models } from "../configuration/Models.ts"
import { Transactions } from "../shared/Transactions.ts"
import { MembersRepository } from "../tenancy/MembersRepository.ts"
import { UserSettingsRepository } from "./UserSettingsRepository.ts"

const decodeDocument = Schema.decodeUnknownSync(UserSettingsDocument)

/**
 * What a provider key no config has is told to name instead (an empty key too): the provider
 * configs of the caller's organizations, as an answer lists them, or that there are none.
 */
const namesToUse = ({ names, total }: { readonly names: ReadonlyArray<string>; readonly total: number }) =>
  total === 0
    ? ", nor any other: create one in an organization first"
    : `; name one of theirs: ${names.map((name) => JSON.stringify(name)).join(", ")}${andMore(total - names.length)}`

const make = Effect.gen(function*() {
  const settings = yield* UserSettingsRepository
  const members = yield* MembersRepository
  const models = yield* Models
  const { transaction } = yield* Transactions

  const get = (userId: UserId) =>
    Effect.map(settings.find(userId), Option.getOrElse(() => DEFAULT_USER_SETTINGS))

  /** What is wrong with the merged document; providers are checked only where the patch changes them. */
  const problems = (userId: UserId, document: UserSettingsDocument, patch: UserSettingsPatch) =>
    Effect.gen(function*() {
      const issues: Array<Issue> = []
      const { email, sms } = document.notifications
      if (email.enabled && email.notification_email === undefined) {
        issues.push({
          path: "/notifications/email/notification_email",
          message: "is required while e-mail notifications are enabled"
        })
      }
      if (sms.enabled && sms.phone_number === undefined) {
        issues.push({ path: "/notifications/sms/phone_number", message: "is required while SMS notifications are enabled" })
      }
      const providers = document.code?.providers ?? {}
      const defaultProvider = document.code?.default_provider
      if (defaultProvider !== undefined && !Object.hasOwn(providers, defaultProvider)) {
        issues.push({
          path: "/code/default_provider",
          message: `names the provider ${JSON.stringify(defaultProvider)}, which code.providers does not configure`
        })
      }
      // Over the limit, the providers the patch changes are not looked up: the change is refused anyway.
      if (Object.keys(providers).length > MAX_PROVIDERS) {
        issues.push({ path: "/code/providers", message: `must configure at most ${MAX_PROVIDERS} providers` })
        return issues
      }
      const touched = Object.entries(patch.code?.providers ?? {}).flatMap(([provider, entry]) =>
        entry === null ? [] : [{ provider_config: provider, model: entry.model ?? undefined }]
      )
      if (touched.length === 0) return issues
      const orgIds = yield* members.orgIdsOf(userId)
      const found = yield* models.namedInOrgs(orgIds, touched)
      const theirs = found.includes("no_provider_config") ? namesToUse(yield* models.providerConfigNamesInOrgs(orgIds)) : ""
      touched.forEach(({ model, provider_config: provider }, i) => {
        if (found[i] === "no_provider_config") {
          issues.push({
            path: pointerOf(["code", "providers", provider]),
            message: `none of your organizations has a model provider config named ${JSON.stringify(provider)}${theirs}`
          })
        } else if (found[i] === "no_model") {
          issues.push({
            path: pointerOf(["code", "providers", provider, "model"]),
            message: `none of your organizations has a model named ${JSON.stringify(model)} under the provider config ${
              JSON.stringify(provider)
            }`
          })
        }
      })
      return issues
    })

  /** Merges `patch` onto the stored document and answers the whole document. */
  const update = (userId: UserId, patch: UserSettingsPatch) =>
    transaction(Effect.gen(function*() {
      yield* settings.ensure(userId)
      const stored = yield* Effect.map(settings.find(userId, "update"), Option.getOrElse(() => DEFAULT_USER_SETTINGS))
      const document = decodeDocument(withDefaults(mergePatch(stored, patch)))
      const issues = yield* problems(userId, document, patch)
      if (issues.length > 0) {
        return yield* invalidRequestWith("The settings were not changed", issues)
      }
      yield* settings.save(userId, document)
      return document
    }))

  return { get, update } as const
})

export class UserSettings extends Context.Service<UserSettings, Effect.Success<typeof make>>()("UserSettings") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      UserSettingsRepository.layer,
      MembersRepository.layer,
      Models.layer,
      Transactions.layer
    ])
  )
}
