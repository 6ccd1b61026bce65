import type { FlowRecord } from '../../../flows/contract.js'
import { expandProvider, findProvider, providerNeeds, subdomainFields } from '../../broker/providers/expand.js'
import { brokerError } from '../../errors/index.js'
import { BrokerClient } from '../broker-client.js'
import { openInBrowser } from '../open-browser.js'
import { openVault } from '../secrets/vault.js'
import { awaitCapture, flowState } from './await-capture.js'
import { type Captured, listenOnce } from './capture.js'
import { awaitDevice } from './device.js'
import { driveFlow } from './drive.js'
import { FLOW_PRESETS, missingFields } from './presets.js'
import { askMissing } from './prompt.js'
import { buildRecord, presetOf, type RecordInput } from './record.js'
import { fillKeptSecrets, saveKeptSecrets } from './secrets.js'

export interface StoreOptions extends RecordInput {
  broker: string
  /** One of the broker's api.keys, when it has any. */
  apiKey?: string
  capture?: boolean
  open?: boolean
  saveSecret?: boolean
  insecureStorage?: boolean
  /** Plaintext secrets file for --insecure-storage. */
  secretsFile?: string
  /** Whether missing fields may be asked for on a terminal (false under --json: a script reads the answer). */
  interactive?: boolean
  /** Progress and notices (stderr). */
  notify: (line: string) => void
  /** A device flow's live countdown, rewritten in place (stderr on a terminal). */
  countdown?: (text: string | undefined) => void
}

export interface StoreResult {
  hash: string
  url: string
  plugin: string
  expires_in: number
  expires_at: string
  callback?: string
  /** A device flow's (RFC 8628): the code the user enters, where, and how often the broker may be polled. */
  user_code?: string
  verification_uri?: string
  verification_uri_complete?: string
  interval?: number
  /** Secrets kept with --save-secret: which id, and where. */
  saved?: Array<{ id: string; where: string }>
  /** With --capture: what the flow delivered. */
  captured?: Captured
}

/** `broker store`: builds the record, fills secrets (keychain, prompt), stores it, optionally captures the result. */
export async function storeViaBroker(opts: StoreOptions): Promise<StoreResult> {
  const client = new BrokerClient(opts.broker, { apiKey: opts.apiKey })
  const built: FlowRecord = buildRecord(opts)
  if (opts.capture && built.callback !== undefined) throw brokerError('captureWithCallback')
  // A provider's URLs are filled here, as the broker would: what is missing is then what the user must give.
  const entry = built.provider === undefined ? undefined : findProvider(String(built.provider))
  const needs = entry ? providerNeeds(built, entry) : []
  const record = expandProvider(built, { subdomainLater: true })
  const preset = presetOf(record, opts.flow)
  if (opts.capture && preset === FLOW_PRESETS['oauth1-1']) {
    throw brokerError('captureSigningFlow')
  }
  const vaultOpts = { broker: client.url, insecure: opts.insecureStorage, file: opts.secretsFile, notify: opts.notify }
  // With --save-secret, a missing keychain is an error before anything is stored.
  const vault = opts.saveSecret ? openVault(vaultOpts) : undefined
  const secretKind = { confidential: entry?.confidential === true }
  fillKeptSecrets(record, missingFields(record, preset, secretKind), vaultOpts)
  // The URLs a subdomain fills are asked for as that subdomain.
  const filledLater = entry && needs.length ? subdomainFields(entry) : []
  Object.assign(
    record,
    await askMissing(
      [...needs, ...missingFields(record, preset, secretKind).filter((f) => !filledLater.includes(f))],
      undefined,
      {
        interactive: opts.interactive,
      },
    ),
  )
  if (needs.length) Object.assign(record, expandProvider(record))

  // Saved before storing: a keychain that refuses the write fails the command with nothing stored.
  const saved = vault ? saveKeptSecrets(record, vault, vaultOpts) : undefined

  // A device flow takes no callback: its result is polled for (awaitDevice).
  const device = preset === FLOW_PRESETS.device
  // The listener takes only a delivery that hands back this flow's state: the record's own, or one made for it.
  const ownState = typeof record.state === 'string' ? record.state : undefined
  const listener = opts.capture && !device ? await listenOnce(client, { state: ownState }) : undefined
  try {
    if (listener) {
      record.callback = listener.callback
      record.state = listener.state
      record.delivery ??= 'code'
    }
    // The flow's clock starts while the broker handles the request: from the moment it was sent, the
    // expiry is at the earliest, never later than the broker's.
    const sent = Date.now()
    const stored = await client.store(record)
    const expires_at = new Date(sent + stored.expires_in * 1000).toISOString()
    const result: StoreResult = {
      ...stored,
      expires_at,
      ...(record.callback ? { callback: String(record.callback) } : {}),
      ...(saved ? { saved } : {}),
    }
    if (device || stored.plugin === 'oauth_device_2') {
      const captured = await awaitDevice(client, stored, {
        open: opts.open !== false,
        notify: opts.notify,
        countdown: opts.countdown,
      })
      return { ...result, captured }
    }
    if (!listener) {
      if (opts.open) await openInBrowser(stored.url, opts.notify)
      return result
    }
    const waiting = awaitCapture(
      {
        delivered: (ms) => listener.delivered(ms),
        check: () => flowState(client, stored.hash),
        notify: opts.notify,
      },
      { expiresIn: stored.expires_in, port: listener.port },
    )
    // It may fail while we still drive the flow below; it is awaited (and reported) after that.
    waiting.catch(() => undefined)
    if (preset && !preset.browser) {
      opts.notify(`Running the flow (${stored.plugin})…`)
      await driveFlow(stored.url, listener.callback, stored.hash)
    } else {
      opts.notify(`Open this URL in a browser to run the flow:\n  ${stored.url}`)
      if (opts.open) await openInBrowser(stored.url, opts.notify)
      opts.notify(
        `Waiting for the result at ${listener.callback} (open the start URL within ${stored.expires_in} s; the login then has store.callbackWait) …`,
      )
    }
    const captured = await waiting
    // The state made for the capture is not the user's: the result shows what the flow gave.
    if (ownState === undefined) delete captured.result.state
    return { ...result, captured }
  } finally {
    await listener?.close()
  }
}
