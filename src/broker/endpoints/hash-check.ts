import { brokerError } from '../../errors/index.js'
import type { FlowFailure, Progress } from '../store/flow-store.js'
import type { BrokerDeps } from '../deps.js'
import { redact } from '../../redact.js'
import { leaseLapsed } from './lease.js'
import { markInterrupted } from './run.js'

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
}

/** GET /hash-check: the stored record with every secret redacted, its progress and time left. */
export async function checkHash(deps: BrokerDeps, hash: string | undefined): Promise<HashCheck> {
  if (!hash) throw brokerError('hashRequired')
  let entry = await deps.store.get(hash)
  if (!entry) throw brokerError('unknownHash')
  // An exchange whose process was killed: asked first, /hash-check ends the flow and says why (once).
  if (leaseLapsed(entry)) entry = (await markInterrupted(deps, entry)) ?? (await deps.store.get(hash)) ?? entry
  const plugin = deps.plugins.loaded(entry.plugin) ?? (await deps.plugins.get(entry.plugin).catch(() => undefined))
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
  }
}
