/** Organizations (src/domain/tenancy/Organizations.ts): whoever creates one becomes its owner. */
import { Context, Effect, Layer } from "effect"
import { OrgId, type UserId } from "../../domain/shared/Ids.ts"
import type { ListQuery } from "../../domain/shared/Pagination.ts"
import type { Principal } from "../../domain/tenancy/Principal.ts"
import { someOrFail } from "../shared/Failures.ts"
import { IdGenerator } from "../shared/Ids.ts"
import { listOf, paged } from "../shared/Paging.ts"
import { Transactions } from "../shared/Transactions.ts"
import { orgNotFound } from "./Access.ts"
import { MembersRepository } from "./MembersRepository.ts"
import { OrganizationsRepository } from "./OrganizationsRepository.ts"

const make = Effect.gen(function*() {
  const organizations = yield* OrganizationsRepository
  const members = yield* MembersRepository
  const ids = yield* IdGenerator
  const { transaction } = yield* Transactions

  /** A new organization whose owner is `ownerId`. */
  const create = (name: string, ownerId: UserId) =>
    transaction(Effect.gen(function*() {
      const organization = yield* organizations.insert({ id: yield* ids.make(OrgId), name })
      yield* members.insert({ org_id: organization.id, user_id: ownerId, role: "owner" })
      return organization
    }))

  /** The organizations the caller belongs to (an organization key: its own). */
  const list = (principal: Principal, query: ListQuery) =>
    Effect.gen(function*() {
      const orgIds = principal.kind === "user" ? yield* members.orgIdsOf(principal.userId) : [principal.orgId]
      return yield* paged(
        listOf("organizations", principal.kind === "user" ? principal.userId : principal.orgId),
        query,
        (keyset) => organizations.pageAmong(orgIds, keyset),
        (org) => org.id
      )
    })

  const get = (orgId: OrgId) => organizations.findById(orgId).pipe(someOrFail(() => orgNotFound(orgId)))

  const rename = (orgId: OrgId, name: string) => organizations.rename(orgId, name).pipe(someOrFail(() => orgNotFound(orgId)))

  return { create, list, get, rename } as const
})

export class Organizations extends Context.Service<Organizations, Effect.Success<typeof make>>()("Organizations") {
  static readonly layer = Layer.effect(this, make).pipe(
    Layer.provide([
      OrganizationsRepository.layer,
      MembersRepository.layer,
      IdGenerator.layer,
      Transactions.layer
    ])
  )
}
