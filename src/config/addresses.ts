import ipaddr from 'ipaddr.js'
import { ClearingMap } from '../../util/clearing-map.js'

/**
 * What an address is to the broker as a client: `public` (any provider), `internal` (loopback,
 * private, unique-local, shared: a developer's own machine or network), `forbidden` (link-local and
 * cloud metadata, unspecified, multicast, broadcast, reserved: never a provider).
 */
export type AddressClass = 'public' | 'internal' | 'forbidden'

// Cloud metadata services outside link-local: AWS over IPv6, Alibaba (shared space), Oracle.
const METADATA = new Set(['fd00:ec2::254', '100.100.100.200', '192.0.0.192'])

const V4: Readonly<Record<string, AddressClass>> = {
  unicast: 'public',
  loopback: 'internal',
  private: 'internal',
  carrierGradeNat: 'internal',
}
const V6: Readonly<Record<string, AddressClass>> = {
  unicast: 'public',
  loopback: 'internal',
  uniqueLocal: 'internal',
}

/**
 * Classifies an IP address as the socket will see it. ipaddr.js reads every spelling the resolver
 * or URL parser may hand on; IPv4-mapped IPv6 is judged as its IPv4 address, and NAT64 and 6to4
 * addresses as the IPv4 address they carry. Anything unparsable is forbidden.
 */
export function classifyAddress(address: string): AddressClass {
  let kind = classified.get(address)
  if (kind === undefined) {
    kind = classify(address)
    classified.set(address, kind)
  }
  return kind
}

// Every provider request's socket asks this of its address, and a broker talks to a few providers: the
// answers are kept (ipaddr.js parses into objects each time, the most a token request allocated of its own).
const classified = new ClearingMap<string, AddressClass>(1024)

function classify(address: string): AddressClass {
  const text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  if (!ipaddr.isValid(text)) return 'forbidden'
  const ip = ipaddr.process(text)
  if (METADATA.has(ip.toString())) return 'forbidden'
  if (ip.kind() === 'ipv4') return V4[ip.range()] ?? 'forbidden'
  const v6 = ip as ipaddr.IPv6
  const range = v6.range()
  const p = v6.parts
  // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) reach the IPv4 address they embed.
  if (range === 'rfc6052') return classify(v4Of(p[6]!, p[7]!))
  if (range === '6to4') return classify(v4Of(p[1]!, p[2]!))
  // IPv4-compatible (::a.b.c.d, deprecated): no provider lives there.
  if (range === 'unicast' && p.slice(0, 6).every((x) => x === 0)) return 'forbidden'
  return V6[range] ?? 'forbidden'
}

const v4Of = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`

// A URL's host after WHATWG parsing: IPv4 always as dotted decimal, IPv6 in brackets.
const V4_LITERAL = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/

/**
 * Whether `host` (a URL's hostname, IPv6 in brackets or not) is an IP literal rather than a name.
 * Judged by shape first: ipaddr.js takes tens of microseconds to refuse a name, and /store asks this
 * of every provider URL.
 */
export function isIpLiteral(host: string): boolean {
  const text = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
  if (text.includes(':')) return ipaddr.IPv6.isValid(text)
  return V4_LITERAL.test(text) && ipaddr.IPv4.isValidFourPartDecimal(text)
}
