import { newFlowIds } from '../ids.js'
import { destinationProblems } from '../outbound/record-check.js'
import { expandProvider } from '../providers/expand.js'
import type { FlowEntry } from '../store/flow-store.js'
import type { BrokerDeps } from '../deps.js'
import { prepareStart } from '../flow/step.js'
import { createFlow } from '../flow/transition.js'
import { normalizeRecord, recordPluginName } from './plugins.js'
import { atStoreError, storeIo } from './record/at-store.js'
import { sanitizeRecord } from './record/parse.js'
import { validateRecord } from './record/validate.js'

/** POST /store's answer. */
export interface StoredFlow {
  hash: string
  /** The start URL. */
  url: string
  /** The flow plugin the record selected, e.g. `oauth_2_3-legged`. */
  plugin: string
  /** Whole seconds the flow lives (store.expire, or the provider's for a device flow). */
  expires_in: number
  /** A device flow's (RFC 8628): what the user enters, where, and how often the app may poll. */
  user_code?: string
  verification_uri?: string
  verification_uri_complete?: string
  interval?: number
}

/**
 * POST /store: the body parsed into a record, a named provider's URLs filled in, its flow plugin
 * found, where it sends the broker checked (before validation, which may fetch an issuer's metadata),
 * validated, a device flow's codes asked for, the first step run when it can be, the flow created.
 */
export async function storeFlow(deps: BrokerDeps, body: unknown): Promise<StoredFlow> {
  const expanded = expandProvider(sanitizeRecord(body))
  const name = recordPluginName(expanded)
  const plugin = deps.plugins.loaded(name) ?? (await deps.plugins.get(name))
  const record = normalizeRecord(expanded, plugin)
  const destinations = destinationProblems(record)
  const { protocol, host } = deps.config
  await validateRecord(record, plugin, deps.config, destinations, {
    callbackUrl: `${protocol}://${host}/callback`,
    registrations: deps.store.registrations(deps.config.registration),
  })
  // A device flow asks the provider for its codes now: the app shows the user code at once.
  const ready = plugin.prepare ? await plugin.prepare(record, storeIo(deps.config)).catch(rethrowAtStore) : undefined
  const lifetime = ready?.expiresIn ?? deps.store.expireSeconds
  const now = Date.now()
  // The OAuth state is the flow's from the start: /callback derives the hash from it.
  const { hash, state } = newFlowIds(deps.config.session.secret)
  const entry: FlowEntry = {
    hash,
    plugin: name,
    record,
    progress: ready && plugin.poll ? 'awaiting_user' : 'stored',
    createdAt: now,
    expiresAt: now + lifetime * 1000,
    data: { ...ready?.data, state },
  }
  const prepared = await prepareStart(deps, entry, plugin)
  if (prepared) entry.data = prepared.data
  await createFlow(deps, entry, { reusable: plugin.reusable === true, redirect: prepared?.redirect })
  return {
    ...deviceFields(ready?.answer),
    hash: entry.hash,
    url: `${protocol}://${host}/start?hash=${entry.hash}`,
    plugin: name,
    expires_in: lifetime,
  }
}

/** What a device flow's first step tells the app (RFC 8628 §3.2), of the right type; a plugin's other fields stay unsaid. */
function deviceFields(answer: Record<string, unknown> | undefined): Partial<StoredFlow> {
  if (!answer) return {}
  const out: Partial<StoredFlow> = {}
  for (const key of ['user_code', 'verification_uri', 'verification_uri_complete'] as const)
    if (typeof answer[key] === 'string') out[key] = answer[key]
  if (typeof answer.interval === 'number') out.interval = answer.interval
  return out
}

const rethrowAtStore = (err: unknown): never => {
  throw atStoreError(err)
}
