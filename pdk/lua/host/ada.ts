/**
 * What broker's resty.ada needs: Node's `URL`, which is the ada parser (WHATWG URL), so a URL parses,
 * normalizes and takes components as Kong's libada binding does. Lua keeps a URL as its href; each
 * operation parses it again. A failure answers `[undefined]` (the Lua side words lua-resty-ada's
 * `nil, err`); a setter the WHATWG rules ignore is a failure, as ada's setters answer false.
 */
import { domainToASCII, domainToUnicode } from 'node:url'
import { bytesOf } from './codec.js'
import type { HostOp } from './types.js'

const text = (v: unknown): string => bytesOf(v).toString('utf8')

function parse(input: unknown, base?: unknown): URL | undefined {
  try {
    return base === undefined ? new URL(text(input)) : new URL(text(input), text(base))
  } catch {
    return undefined
  }
}

// ada's scheme types: 0 http, 1 not special, 2 https, 3 ws, 4 ftp, 5 wss, 6 file
const SCHEME_TYPES: Record<string, number> = { 'http:': 0, 'https:': 2, 'ws:': 3, 'ftp:': 4, 'wss:': 5, 'file:': 6 }

/** Whether the URL has a host (maybe empty): its serialization puts `//` after the scheme. */
const hasHost = (u: URL) => u.href.startsWith('//', u.protocol.length)
/** The href before any fragment: a `?` there starts the query, even an empty one. */
const beforeHash = (u: URL) => u.href.split('#', 1)[0]!

const GETTERS: Record<string, (u: URL) => unknown> = {
  href: (u) => u.href,
  protocol: (u) => u.protocol,
  username: (u) => u.username,
  password: (u) => u.password,
  host: (u) => u.host,
  hostname: (u) => u.hostname,
  port: (u) => (u.port === '' ? '' : Number(u.port)),
  pathname: (u) => u.pathname,
  search: (u) => u.search,
  hash: (u) => u.hash,
  origin: (u) => u.origin,
  scheme_type: (u) => SCHEME_TYPES[u.protocol] ?? 1,
  // 0 a name, 1 IPv4, 2 IPv6 (WHATWG serializes an IPv4 host as four decimal parts)
  host_type: (u) => (u.hostname.startsWith('[') ? 2 : /^\d+\.\d+\.\d+\.\d+$/.test(u.hostname) ? 1 : 0),
  has_credentials: (u) => u.username !== '' || u.password !== '',
  has_non_empty_username: (u) => u.username !== '',
  has_password: (u) => u.password !== '',
  has_non_empty_password: (u) => u.password !== '',
  has_hostname: (u) => hasHost(u),
  has_empty_hostname: (u) => hasHost(u) && u.hostname === '',
  has_port: (u) => u.port !== '',
  has_search: (u) => beforeHash(u).includes('?'),
  has_hash: (u) => u.href.includes('#'),
}

type Part =
  'href' | 'protocol' | 'username' | 'password' | 'host' | 'hostname' | 'port' | 'pathname' | 'search' | 'hash'
const SETTABLE = new Set<string>([
  'protocol',
  'username',
  'password',
  'host',
  'hostname',
  'port',
  'pathname',
  'search',
  'hash',
])

/** Whether a setter that left the URL as it was refused the value (the WHATWG rules ignore what they cannot take). */
function refused(u: URL, part: Part, value: string): boolean {
  switch (part) {
    case 'protocol':
      return u.protocol !== `${value.split(':', 1)[0]!.toLowerCase()}:`
    case 'username':
    case 'password':
      return !hasHost(u) || u.hostname === '' || u.protocol === 'file:'
    case 'host':
    case 'hostname': {
      // the value as this scheme would serialize it ("X.test:443" on https is "x.test"): the same host is no refusal
      const as = parse(`${u.protocol}//${value}/`)
      return as === undefined || as[part] !== u[part]
    }
    case 'port':
      return !hasHost(u) || u.hostname === '' || u.protocol === 'file:' || !/^\d*$/.test(value) || Number(value) > 65535
    case 'pathname':
      // an opaque path (mailto:x) cannot be set
      return !hasHost(u) && !u.pathname.startsWith('/')
    default:
      return false
  }
}

/** The WHATWG URLSearchParams operations of resty.ada.search, on a query string (with or without `?`). */
const SEARCH: Record<string, (p: URLSearchParams, key: string, value: string) => unknown> = {
  has: (p, k) => p.has(k),
  has_value: (p, k, v) => p.has(k, v),
  get: (p, k) => p.get(k) ?? undefined,
  get_all: (p, k) => p.getAll(k),
  size: (p) => p.size,
  keys: (p) => [...p.keys()],
  values: (p) => [...p.values()],
  set: (p, k, v) => (p.set(k, v), p.toString()),
  append: (p, k, v) => (p.append(k, v), p.toString()),
  remove: (p, k) => (p.delete(k), p.toString()),
  remove_value: (p, k, v) => (p.delete(k, v), p.toString()),
  sort: (p) => (p.sort(), p.toString()),
  tostring: (p) => p.toString(),
}

export const ADA_OPS: Record<string, HostOp> = {
  /** The href of `url` (resolved against `base` when given), or nothing when it does not parse. */
  ada_parse: (_s, url, base) => {
    const u = parse(url, base ?? undefined)
    return u ? [u.href] : [undefined]
  },
  /** A component (or a has_* answer) of the URL whose href is given. */
  ada_get: (_s, href, part) => {
    const u = parse(href)
    const get = GETTERS[String(part)]
    if (!u || !get) return [undefined]
    return [get(u)]
  },
  /** The href after setting a component, or nothing when the URL refused the value. */
  ada_set: (_s, href, part, value) => {
    const p = String(part)
    if (p === 'href') {
      const u = parse(value)
      return u ? [u.href] : [undefined]
    }
    const u = parse(href)
    if (!u || !SETTABLE.has(p)) return [undefined]
    const v = text(value)
    const before = u.href
    u[p as Exclude<Part, 'href'>] = v
    if (u.href === before && refused(u, p as Part, v)) return [undefined]
    return [u.href]
  },
  /** The href without its port, search or hash. */
  ada_clear: (_s, href, part) => {
    const u = parse(href)
    if (!u) return [undefined]
    if (part === 'port') u.port = ''
    else if (part === 'search') u.search = ''
    else if (part === 'hash') u.hash = ''
    // an empty query or fragment ("x?#") is cleared too: ada removes the component, not only its text
    let out = u.href
    if (part === 'hash' && out.endsWith('#')) out = out.slice(0, -1)
    if (part === 'search') out = out.replace(/\?(?=#|$)/, '')
    return [out]
  },
  ada_idna: (_s, domain, to) => [to === 'unicode' ? domainToUnicode(text(domain)) : domainToASCII(text(domain))],
  /** A URLSearchParams operation on a query string; the new query string for the ones that change it. */
  ada_search: (_s, op, query, key, value) => {
    const fn = SEARCH[String(op)]
    if (!fn) return [undefined]
    return [fn(new URLSearchParams(text(query)), text(key), text(value))]
  },
}
