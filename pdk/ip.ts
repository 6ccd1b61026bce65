/** pdk.ip: whether an address is in config `trusted_ips` (IPv4 and IPv6, addresses or CIDRs). */
import ipaddr from 'ipaddr.js'
import type { Context } from './context.js'
import { checkPhase, SETS } from './phases.js'

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number]

const cache = new WeakMap<readonly string[], (ip: string) => boolean>()

/** A matcher for a trusted_ips list; invalid entries are ignored as Kong does. */
export function trustMatcher(list: readonly string[]): (ip: string) => boolean {
  const hit = cache.get(list)
  if (hit) return hit
  const ranges: Range[] = []
  for (const entry of list) {
    try {
      ranges.push(
        entry.includes('/')
          ? ipaddr.parseCIDR(entry)
          : (() => {
              const addr = ipaddr.parse(entry)
              return [addr, addr.kind() === 'ipv4' ? 32 : 128] as Range
            })(),
      )
    } catch {
      // not an address or CIDR: skipped, like Kong's is_valid_ip_or_cidr filter
    }
  }
  const match = (ip: string): boolean => {
    if (typeof ip !== 'string' || !ipaddr.isValid(ip)) return false
    let addr: ipaddr.IPv4 | ipaddr.IPv6 = ipaddr.parse(ip)
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress())
      addr = (addr as ipaddr.IPv6).toIPv4Address()
    return ranges.some(([range, bits]) => range.kind() === addr.kind() && addr.match(range, bits))
  }
  cache.set(list, match)
  return match
}

/** Builds pdk.ip for a request context. */
export function createIp(ctx: Context) {
  return {
    /** True when `address` is trusted per config `trusted_ips`. */
    is_trusted(address: string): boolean {
      checkPhase(ctx, SETS.ALL)
      return trustMatcher(ctx.config.trusted_ips)(address)
    },
  }
}

/**
 * nginx's realip module: the client address once forwarded headers from trusted peers are
 * honoured (`real_ip_header`, `real_ip_recursive`).
 */
export function realClient(
  peer: { ip: string; port: number },
  header: string | undefined,
  headerName: string,
  recursive: boolean,
  trusted: (ip: string) => boolean,
): { ip: string; port: number } {
  if (!header || !trusted(peer.ip)) return peer
  if (headerName.toLowerCase() !== 'x-forwarded-for') {
    const ip = header.trim()
    return ipaddr.isValid(ip) ? { ip, port: peer.port } : peer
  }
  const hops = header
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (!recursive) {
    const last = hops[hops.length - 1]
    return last && ipaddr.isValid(last) ? { ip: last, port: peer.port } : peer
  }
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!
    if (!ipaddr.isValid(hop)) return peer
    if (!trusted(hop) || i === 0) return { ip: hop, port: peer.port }
  }
  return peer
}
