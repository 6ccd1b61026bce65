import { FlowError, type FlowContext, type FlowRecord } from '../contract.js'
import { BoundedCache } from './bounded-cache.js'
import { readProviderJson } from './provider-json.js'
import { isHttpUrl } from './urls.js'

type Http = FlowContext['http']

/** What the broker reads of a protected resource's metadata (RFC 9728 §2). */
export interface ResourceMetadata {
  resource: string
  authorization_servers?: string[]
  scopes_supported?: string[]
}

/** A protected resource as a flow uses it: its authorization server and the scope to ask for. */
export interface ProtectedResource {
  /**
   * `authorization_servers[0]`: the issuer whose metadata is discovered as usual; without protected
   * resource metadata, the resource's origin (MCP 2025-03-26).
   */
  issuer: string
  /** The scope of the 401 challenge, else the metadata's `scopes_supported`; undefined when neither says. */
  scope?: string
  /**
   * The resource indicator to send (RFC 8707): the record's, or the metadata's own `resource` when it
   * names a same-origin prefix of it (the MCP SDK's one document at the root); undefined when the server
   * published no protected resource metadata, so nothing says it takes one (as the SDK's client does).
   */
  send?: string
  /** No protected resource metadata: the origin is the authorization server (MCP 2025-03-26). */
  legacy?: boolean
}

// Each flow of a resource reads this at /store, /start and /callback: kept per resource URL for
// TTL_MS, at most MAX_RESOURCES of them, like issuer metadata: none evicted by another (bounded-cache.ts).
const TTL_MS = 10 * 60_000
const MAX_RESOURCES = 256
const cache = new BoundedCache<ProtectedResource>(MAX_RESOURCES)

const text = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined)

/** Whether a record names a protected resource and nothing else to find its authorization server by. */
export const discoversFromResource = (record: Readonly<FlowRecord>): boolean =>
  text(record.resource) !== undefined &&
  text(record.issuer) === undefined &&
  record.authorize_url === undefined &&
  record.access_url === undefined

/** The resource's authorization server and scope from the cache, without I/O; undefined when not cached. */
export function cachedResource(resource: string): ProtectedResource | undefined {
  return cache.get(resource)
}

/**
 * Discovers a protected resource's authorization server (RFC 9728), in MCP's order: the metadata
 * named by the `resource_metadata` of the 401 challenge an unauthenticated GET of the resource gets,
 * else `{origin}/.well-known/oauth-protected-resource{path}`, else the same without the path. The
 * document must name the very resource (§3.3), else a FlowError naming both.
 */
export async function discoverResource(resource: string, http: Http): Promise<ProtectedResource> {
  const hit = cachedResource(resource)
  if (hit) return hit
  const reasons: string[] = []
  const probe = await http(resource, { headers: { accept: 'application/json, text/event-stream' } })
  const challenge = probe.status === 401 ? bearerChallenge(probe.headers['www-authenticate']) : {}
  if (probe.status !== 401) reasons.push(`${resource} answered ${probe.status} without a challenge`)
  const noMetadata = wellKnownUrls(resource)
  const candidates = [...new Set([challenge.resource_metadata, ...noMetadata])].filter(
    (u): u is string => u !== undefined,
  )
  for (const url of candidates) {
    if (!isHttpUrl(url)) {
      reasons.push(`the challenge names a resource_metadata that is not an http(s) URL`)
      continue
    }
    const meta = await fetchMetadata(url, http, reasons)
    if (!meta) continue
    if (!covers(meta.resource, resource)) {
      throw new FlowError({
        description: `The protected resource metadata at ${url} is for the resource "${String(meta.resource).slice(0, 200)}", not ${resource} nor a same-origin path prefix of it (RFC 9728 §3.3)`,
      })
    }
    const issuer = Array.isArray(meta.authorization_servers) ? text(meta.authorization_servers[0]) : undefined
    if (!issuer || !isHttpUrl(issuer))
      throw new FlowError({ description: `The protected resource metadata at ${url} names no authorization server` })
    const supported = Array.isArray(meta.scopes_supported) ? meta.scopes_supported.filter((s) => text(s)) : []
    const value: ProtectedResource = {
      issuer,
      scope: text(challenge.scope) ?? (supported.length ? supported.join(' ') : undefined),
      send: meta.resource,
    }
    cache.set(resource, value, TTL_MS)
    return value
  }
  // No protected resource metadata at all (a 404 at each address, no challenge naming one): the MCP
  // 2025-03-26 shape, still common. Its origin is the authorization server, as the SDK's client takes it.
  if (noMetadata.every((u) => reasons.some((r) => r === `${u} answered 404`)) && !challenge.resource_metadata) {
    const value: ProtectedResource = { issuer: new URL(resource).origin, scope: text(challenge.scope), legacy: true }
    cache.set(resource, value, TTL_MS)
    return value
  }
  throw new FlowError({ description: `Discovery for the resource ${resource} failed: ${reasons.join('; ')}` })
}

/**
 * Whether protected resource metadata naming `named` is for `resource` (RFC 9728 §3.3): the very
 * resource, or a same-origin path prefix of it at a segment boundary (the SDK's default document at
 * the root names the origin, `http://host/`, for `http://host/mcp`), as MCP's SDK client accepts.
 */
export function covers(named: unknown, resource: string): named is string {
  if (typeof named !== 'string') return false
  if (named === resource) return true
  let a: URL
  let b: URL
  try {
    a = new URL(named)
    b = new URL(resource)
  } catch {
    return false
  }
  if (a.origin !== b.origin || a.search || a.hash) return false
  const prefix = a.pathname.endsWith('/') ? a.pathname : `${a.pathname}/`
  return b.pathname === a.pathname || b.pathname.startsWith(prefix)
}

async function fetchMetadata(url: string, http: Http, reasons: string[]): Promise<ResourceMetadata | undefined> {
  const answer = await http(url, { headers: { accept: 'application/json' } })
  if (answer.status !== 200) {
    reasons.push(`${url} answered ${answer.status}`)
    return undefined
  }
  // Bounded like every provider answer (provider-json.ts): past the bounds, a provider error at once.
  const meta = readProviderJson(answer.body, `The protected resource metadata at ${url}`)
  if (meta && typeof meta === 'object' && !Array.isArray(meta)) return meta as ResourceMetadata
  reasons.push(`${url} answered with a body that is not a JSON object`)
  return undefined
}

/** RFC 9728 §3.1: the well-known segment between the host and the resource's path, then at the root. */
function wellKnownUrls(resource: string): string[] {
  const u = new URL(resource)
  const path = u.pathname.replace(/\/$/, '')
  const root = `${u.origin}/.well-known/oauth-protected-resource`
  return path ? [`${root}${path}`, root] : [root]
}

/**
 * The auth-params of the `Bearer` challenge in a WWW-Authenticate header (RFC 9110 §11.6.1):
 * `Bearer resource_metadata="…", scope="…"`, quoted or token values; other schemes ignored.
 */
export function bearerChallenge(header: string | undefined): Record<string, string> {
  if (!header) return {}
  const at = header.search(/(^|[\s,])Bearer(\s|$)/i)
  if (at < 0) return {}
  const rest = header.slice(at).replace(/^[\s,]*Bearer/i, '')
  const params: Record<string, string> = {}
  const param = /\s*,?\s*([\w!#$%&'*+.^`|~-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))/y
  let m: RegExpExecArray | null
  // Sticky: a name without `=` next (the next challenge's scheme) ends this challenge.
  while ((m = param.exec(rest))) {
    const name = m[1]!.toLowerCase()
    if (!Object.hasOwn(params, name)) params[name] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : (m[3] ?? '')
  }
  return params
}
