/** pdk.ip: whether an address is in config `trusted_ips` (IPv4 and IPv6, addresses or CIDRs). */
import ipaddr from 'ipaddr.js'
import type { Context } from './context.js'
import { checkPhase, phaseRule, SETS } from './private/phases.js'

// Kong's ip.is_trusted checks no phase; the reference lists ALL
const TRUST_PHASES = phaseRule('any', SETS.ALL)

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
      checkPhase(ctx, TRUST_PHASES)
      return trustMatcher(ctx.config.trusted_ips)(address)
    },
  }
}

/** nginx's ngx_parse_addr_port: `addr`, `addr:port` or `[v6]:port`; the port is undefined when absent. */
function addrPort(text: string): { ip: string; port: number | undefined } | undefined {
  let ip = text
  let port: number | undefined
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(text)
  if (v6) {
    ip = v6[1]!
    port = v6[2] === undefined ? undefined : Number(v6[2])
  } else if (/^[^:]+:\d+$/.test(text)) {
    const colon = text.lastIndexOf(':')
    ip = text.slice(0, colon)
    port = Number(text.slice(colon + 1))
  }
  if (!ipaddr.isValid(ip) || (port !== undefined && (port < 1 || port > 65535))) return undefined
  return { ip, port }
}

/**
 * nginx's realip module: the client address once forwarded headers from trusted peers are
 * honoured (`real_ip_header`, `real_ip_recursive`). An address with a port gives that port;
 * without one the forwarded port is nil, as nginx's `$remote_port` is then empty.
 */
export function realClient(
  peer: { ip: string; port: number },
  header: string | undefined,
  headerName: string,
  recursive: boolean,
  trusted: (ip: string) => boolean,
): { ip: string; port: number | undefined } {
  if (!header || !trusted(peer.ip)) return peer
  if (headerName.toLowerCase() !== 'x-forwarded-for') return addrPort(header.trim()) ?? peer
  const hops = header
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (!recursive) {
    const last = hops[hops.length - 1]
    return (last && addrPort(last)) || peer
  }
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = addrPort(hops[i]!)
    if (!hop) return peer
    if (!trusted(hop.ip) || i === 0) return hop
  }
  return peer
}
