/**
 * Which IP addresses are private, loopback or link-local (docs/operations.md, "Private network
 * targets"): the ranges a hosted server refuses to call when AGENT_PLATFORM_BLOCK_PRIVATE_NETWORKS
 * is on. IPv4: 0/8, 10/8, 127/8, 169.254/16, 172.16/12, 192.168/16. IPv6: ::, ::1, fc00::/7,
 * fe80::/10, and IPv4 addresses written as IPv6 (::ffff:a.b.c.d, ::a.b.c.d) by their IPv4 part.
 */
import { isIPv4, isIPv6 } from "node:net"

const IPV4_RANGES: ReadonlyArray<readonly [first: number, bits: number, kind: string]> = [
  [0x00000000, 8, "this-network"],
  [0x0a000000, 8, "private"],
  [0x7f000000, 8, "loopback"],
  [0xa9fe0000, 16, "link-local"],
  [0xac100000, 12, "private"],
  [0xc0a80000, 16, "private"]
]

const ipv4Number = (address: string): number =>
  address.split(".").reduce((value, octet) => value * 256 + Number(octet), 0)

const ipv4Kind = (value: number): string | undefined => {
  for (const [first, bits, kind] of IPV4_RANGES) {
    const size = 2 ** (32 - bits)
    if (value >= first && value < first + size) return kind
  }
  return undefined
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part counts as two). */
const ipv6Groups = (address: string): ReadonlyArray<number> => {
  let text = address.replace(/%.*$/, "")
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted !== null) {
    const value = ipv4Number(dotted[1])
    text = text.slice(0, dotted.index) + `${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined]
  const parse = (part: string) => part === "" ? [] : part.split(":").map((group) => parseInt(group, 16))
  const front = parse(head)
  if (tail === undefined) return front
  const back = parse(tail)
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back]
}

const ipv6Kind = (address: string): string | undefined => {
  const groups = ipv6Groups(address)
  const leadingZeros = groups.slice(0, 5).every((group) => group === 0)
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d): judged by the IPv4 address.
  if (leadingZeros && (groups[5] === 0xffff || (groups[5] === 0 && (groups[6] !== 0 || groups[7] > 1)))) {
    return ipv4Kind(groups[6] * 65536 + groups[7])
  }
  if (groups.every((group) => group === 0)) return "unspecified"
  if (groups.slice(0, 7).every((group) => group === 0) && groups[7] === 1) return "loopback"
  if ((groups[0] & 0xfe00) === 0xfc00) return "unique-local"
  if ((groups[0] & 0xffc0) === 0xfe80) return "link-local"
  return undefined
}

/** The kind of private range `address` (an IP address) is in ("loopback", "link-local", ...), or undefined for a public one. */
export const privateAddressKind = (address: string): string | undefined =>
  isIPv4(address) ? ipv4Kind(ipv4Number(address)) : isIPv6(address) ? ipv6Kind(address) : undefined

/** The host of an http(s) URL as an IP address when it is written as one (brackets removed), else undefined. */
export const literalAddressOf = (url: URL): string | undefined => {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
  return isIPv4(host) || isIPv6(host) ? host : undefined
}
