import open from 'open'
import { BrokerError } from '../../errors.js'
import { BrokerClient } from '../broker-client.js'
import { askMissing } from '../store/prompt.js'
import type { ApiCall } from './api.js'
import { loadPreset } from './preset.js'
import { renderApiCall } from './render.js'
import { startProviderApp } from './server.js'

export interface TestProviderOptions {
  provider?: string
  presetFile?: string
  key?: string
  secret?: string
  host?: string
  port: number
  /** The broker URL; default http://<host>:3000. */
  broker?: string
  scopes?: string[]
  open?: boolean
  /** Stop after the first round trip (and fail when it fails). */
  once?: boolean
  /** The package root, where fixtures/providers lives. */
  root: string
  notify: (line: string) => void
  /** Each round trip's report, as it happens (stdout). */
  report: (text: string) => void
}

export interface TestProviderResult {
  provider: string
  app: string
  broker: string
  calls: ApiCall[]
}

const FLAGS: Record<string, string> = { key: '-k/--key', secret: '-s/--secret', host: '-h/--host' }

/** `broker test-provider`: an app server that runs the provider's flow through the broker and calls its API. */
export async function testProvider(opts: TestProviderOptions): Promise<TestProviderResult> {
  const preset = loadPreset({ root: opts.root, name: opts.provider, file: opts.presetFile })
  const given = { key: opts.key, secret: opts.secret, host: opts.host }
  const missing = Object.entries(given).filter(([, v]) => !v).map(([k]) => k)
  const asked = await askMissing(missing, (f) => FLAGS[f] ?? f)
  const { key, secret, host } = { ...given, ...asked } as { key: string; secret: string; host: string }
  const client = new BrokerClient(opts.broker ?? `http://${host}:3000`)
  const calls: ApiCall[] = []
  let finish!: (err?: Error) => void
  const finished = new Promise<void>((resolve, reject) => (finish = (err) => (err ? reject(err) : resolve())))

  const app = await startProviderApp({
    preset,
    creds: { key, secret },
    host,
    port: opts.port,
    client,
    scopes: opts.scopes,
    onCall: (call) => {
      calls.push(call)
      opts.report(renderApiCall(call))
      if (opts.once) finish()
    },
    onError: (err) => {
      opts.notify(`The flow failed: ${err.message}`)
      if (opts.once) finish(err instanceof BrokerError ? err : new BrokerError('FAILED', err.message))
    },
  }).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'EADDRINUSE' ? new BrokerError('USAGE', `Port ${opts.port} is in use; pick another with --port.`) : err
  })
  const stop = () => finish()
  process.once('SIGINT', stop).once('SIGTERM', stop)
  try {
    opts.notify(`${preset.title} (${preset.flow}) through the broker at ${client.url}.\nRegister ${client.url}/callback at the provider, then visit ${app.url}${opts.once ? '' : ' (Ctrl-C to stop)'}`)
    if (opts.open) await open(app.url)
    await finished
  } finally {
    process.off('SIGINT', stop).off('SIGTERM', stop)
    await app.close()
  }
  return { provider: preset.name, app: app.url, broker: client.url, calls }
}
