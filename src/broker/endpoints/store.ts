import { newFlowIds } from '../ids.js'
import { checkRecordDestinations } from '../outbound/record-check.js'
import { expandProvider } from '../providers/expand.js'
import type { FlowEntry } from '../store/flow-store.js'
import type { BrokerDeps } from '../deps.js'
import { atStoreError, providerHost, recordPluginName, sanitizeRecord, storeIo, validateRecord } from './record.js'
import { prepareStart } from './run.js'

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

/** POST /store: validates a record against its flow plugin and keeps it for store.expire seconds. */
export async function storeFlow(deps: BrokerDeps, body: unknown): Promise<StoredFlow> {
  // A named provider fills its URLs here, before anything checks them (expandProvider).
  const sanitized = expandProvider(sanitizeRecord(body))
  const name = recordPluginName(sanitized)
  const plugin = deps.plugins.loaded(name) ?? (await deps.plugins.get(name))
  // Validation fetches an issuer's metadata: where it points is checked first. Everything else after,
  // so that validation's own problems are all named at once.
  if (sanitized.issuer !== undefined || sanitized.resource !== undefined) checkRecordDestinations(sanitized)
  const { protocol, host } = deps.config
  const record = await validateRecord(sanitized, plugin, deps.config, {
    callbackUrl: `${protocol}://${host}/callback`,
    registrations: deps.store.registrations(deps.config.registration),
  })
  checkRecordDestinations(record)
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
  await deps.store.create(entry, { reusable: plugin.reusable === true, redirect: prepared?.redirect })
  if (deps.events.watched)
    deps.events.publish({
      type: 'stored',
      hash: entry.hash,
      plugin: name,
      progress: entry.progress,
      expiresAt: entry.expiresAt,
      provider: providerHost(record),
    })
  return {
    ...ready?.answer,
    hash: entry.hash,
    url: `${protocol}://${host}/start?hash=${entry.hash}`,
    plugin: name,
    expires_in: lifetime,
  }
}

const rethrowAtStore = (err: unknown): never => {
  throw atStoreError(err)
}
