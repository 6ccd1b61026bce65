import type { FlowRecord } from '../../../flows/contract.js'
import { cachedEndpoints, discovers, pinnedEndpoints } from '../../../flows/lib/oidc/index.js'
import { discoversFromResource } from '../../../flows/lib/resource.js'
import { brokerError } from '../../errors/index.js'
import type { FlowFailure, Progress } from '../store/flow-store.js'
import type { BrokerDeps } from '../deps.js'
import { redact } from '../../redact.js'
import { awaitOutcome } from '../flow/hold.js'

export interface HashCheck {
  hash: string
  plugin: string
  description?: string
  progress: Progress
  /** Whole seconds before the record expires. */
  expires_in: number
  created_at: string
  expires_at: string
  record: Record<string, unknown>
  /** Why it failed: the broker's code, the OAuth `error` its app was sent, and the description. */
  error?: FlowFailure
  /** An OpenID flow's id_token: verified by the broker (true), or passed on unverified (false). */
  id_token_verified?: boolean
  /** What the broker found for a record naming an issuer or a resource (kept with the flow from /start on). */
  discovery?: Discovery
}

/** The authorization server a flow found, and what it sends there, in words where it departs from the record. */
export interface Discovery {
  issuer?: string
  authorization_endpoint?: string
  token_endpoint?: string
  /** The resource indicator sent (RFC 8707); null when none is sent. */
  resource: string | null
  notes?: string[]
}

/** The flow's discovery: what /start kept, else what the caches hold; undefined for a record naming its endpoints. */
function discoveryOf(
  record: Readonly<FlowRecord>,
  data: Readonly<Record<string, unknown>>,
  https: boolean,
): Discovery | undefined {
  if (!discovers(record)) return undefined
  const e = pinnedEndpoints(data) ?? cachedEndpoints(record)
  if (!e) return undefined
  const named = typeof record.resource === 'string' ? record.resource : undefined
  const notes: string[] = []
  if (named && e.resource && e.resource !== named)
    notes.push(
      `The protected resource metadata names ${e.resource}, a same-origin prefix of ${named}: that is the resource sent (RFC 8707), as MCP's SDK client sends it`,
    )
  if (named && !e.resource && discoversFromResource(record))
    notes.push(
      `${named} publishes no protected resource metadata: its origin is the authorization server and no resource is sent (MCP 2025-03-26)`,
    )
  if (e.cimd && record.client_id === undefined && !https)
    notes.push(
      `${e.issuer ?? 'The authorization server'} takes client ID metadata documents, but this broker is served over http: a document's URL (the client_id) must be https for a server to fetch it, so the broker registers its client dynamically (RFC 7591); set protocol: https behind TLS to use one`,
    )
  return {
    issuer: e.issuer,
    authorization_endpoint: e.authorize,
    token_endpoint: e.token,
    resource: e.resource ?? null,
    ...(notes.length ? { notes } : {}),
  }
}

/** GET /hash-check: the stored record with every secret redacted, its progress and time left. */
export async function checkHash(deps: BrokerDeps, hash: string | undefined): Promise<HashCheck> {
  if (!hash) throw brokerError('hashRequired')
  let entry = await deps.store.get(hash)
  if (!entry) throw brokerError('unknownHash')
  // An exchange under way: held for its outcome. One whose process was killed: asked first, /hash-check
  // ends the flow and says why (once).
  if (entry.progress === 'exchanging') entry = (await awaitOutcome(deps, entry)).entry
  const plugin = deps.plugins.loaded(entry.plugin) ?? (await deps.plugins.get(entry.plugin).catch(() => undefined))
  const discovery = discoveryOf(entry.record, entry.data, deps.config.protocol === 'https')
  return {
    hash: entry.hash,
    plugin: entry.plugin,
    description: plugin?.description,
    progress: entry.progress,
    expires_in: Math.max(0, Math.ceil((entry.expiresAt - Date.now()) / 1000)),
    created_at: new Date(entry.createdAt).toISOString(),
    expires_at: new Date(entry.expiresAt).toISOString(),
    record: redact(entry.record, plugin?.secrets),
    ...(entry.error ? { error: entry.error } : {}),
    ...(typeof entry.data.id_token_verified === 'boolean' ? { id_token_verified: entry.data.id_token_verified } : {}),
    ...(discovery ? { discovery } : {}),
  }
}
