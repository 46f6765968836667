/**
 * The operator's rule on private network targets (AGENT_PLATFORM_BLOCK_PRIVATE_NETWORKS,
 * docs/operations.md "Private network targets"). Off: URLs may point anywhere (the embedded
 * default talks to providers on loopback). On: a URL whose host is written as a private,
 * loopback or link-local address is refused where it is configured, and a host name that
 * resolves to one is refused when it is called (checked before the call, and again when the
 * connection is made, so a name that changes its answer in between is caught too).
 */
import { Context, Effect, Layer, Schema } from "effect"
import { type LookupAddress, lookup as dnsLookup, type LookupAllOptions, type LookupOptions } from "node:dns"
import type { LookupFunction } from "node:net"
import { AppConfig } from "../../layers/AppConfig.ts"
import { literalAddressOf, privateAddressKind } from "./PrivateAddresses.ts"

/** A call refused because its host is, or resolves to, a private address. */
export class PrivateNetworkTarget extends Schema.TaggedError<PrivateNetworkTarget>()("PrivateNetworkTarget", {
  host: Schema.String,
  address: Schema.String,
  kind: Schema.String
}) {
  override get message() {
    const resolved = this.host === this.address ? this.host : `${this.host} resolves to ${this.address}`
    return `${resolved}, a ${this.kind} address; this server refuses private, loopback and link-local targets ` +
      `(AGENT_PLATFORM_BLOCK_PRIVATE_NETWORKS)`
  }
}

/** The issue message for a configured URL whose host is a private address literal. */
const literalMessage = (address: string, kind: string) =>
  `must not point at a private, loopback or link-local address (${address} is ${kind}); this server refuses them`

const PRIVATE_TARGET_CODE = "EPRIVATETARGET"

/** Every address `host` resolves to (none when it does not resolve: the call then fails on its own). */
const resolveAll = (host: string) =>
  Effect.callback<ReadonlyArray<LookupAddress>>((resume) => {
    dnsLookup(host, { all: true }, (error, addresses) => resume(Effect.succeed(error === null ? addresses : [])))
  })

/**
 * A `lookup` for sockets that refuses private addresses: what a connection resolves is checked
 * at the moment it connects.
 */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true } as LookupAllOptions, (error, addresses) => {
    if (error !== null) return callback(error, "", 0)
    const refused = addresses.find((address) => privateAddressKind(address.address) !== undefined)
    if (refused !== undefined) {
      const failure = new PrivateNetworkTarget({
        host: hostname,
        address: refused.address,
        kind: privateAddressKind(refused.address)!
      })
      return callback(Object.assign(new Error(failure.message), { code: PRIVATE_TARGET_CODE }), "", 0)
    }
    if ((options as LookupOptions).all === true) return (callback as unknown as (e: null, a: Array<LookupAddress>) => void)(null, addresses)
    return callback(null, addresses[0].address, addresses[0].family)
  })
}

const make = Effect.map(AppConfig, (config) => {
  const blocking = config.blockPrivateNetworks

  /** Where it is configured: the problem with `url` when its host is a private address literal (blocking only). */
  const literalProblem = (url: string): string | undefined => {
    if (!blocking || !URL.canParse(url)) return undefined
    const address = literalAddressOf(new URL(url))
    const kind = address === undefined ? undefined : privateAddressKind(address)
    return address === undefined || kind === undefined ? undefined : literalMessage(address, kind)
  }

  /** Before a call: fails when the URL's host is, or resolves to, a private address (blocking only). */
  const checkTarget = (url: string): Effect.Effect<void, PrivateNetworkTarget> =>
    Effect.gen(function*() {
      if (!blocking || !URL.canParse(url)) return
      const parsed = new URL(url)
      const literal = literalAddressOf(parsed)
      const addresses = literal !== undefined ? [literal] : (yield* resolveAll(parsed.hostname)).map((a) => a.address)
      for (const address of addresses) {
        const kind = privateAddressKind(address)
        if (kind !== undefined) {
          return yield* Effect.fail(new PrivateNetworkTarget({ host: literal ?? parsed.hostname, address, kind }))
        }
      }
    })

  /** The socket `lookup` outgoing calls use: refusing private addresses when blocking, else undefined (the default). */
  const lookup: LookupFunction | undefined = blocking ? guardedLookup : undefined

  return { blocking, literalProblem, checkTarget, lookup } as const
})

export class NetworkPolicy extends Context.Service<NetworkPolicy, Effect.Success<typeof make>>()("NetworkPolicy") {
  static readonly layer = Layer.effect(this, make)
}
