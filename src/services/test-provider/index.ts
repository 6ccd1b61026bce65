import { BrokerError, brokerError } from '../../errors/index.js'
import { BrokerClient } from '../broker-client.js'
import { openInBrowser } from '../open-browser.js'
import { askMissing, type PromptSpec } from '../store/prompt.js'
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
  /** One of the broker's api.keys, when it has any. */
  apiKey?: string
  scopes?: string[]
  open?: boolean
  /** Stop after the first round trip (and fail when it fails). */
  once?: boolean
  /** Whether a missing -k/-s/-h may be asked for on the terminal (not under --json). */
  interactive?: boolean
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

const PROMPTS: Record<string, PromptSpec> = {
  key: { kind: 'text', summary: 'Client id or consumer key', flag: '-k/--key' },
  secret: { kind: 'secret', summary: 'Client or consumer secret', flag: '-s/--secret' },
  host: {
    kind: 'text',
    summary: 'Host the browser reaches this machine at (localhost, an IP, a name)',
    flag: '-h/--host',
    check: checkHost,
  },
}

/** A host name or IP address the app's URLs can be built from, or what is wrong with it. */
export function checkHost(host: string): true | string {
  const bad = `Enter a host name or IP address such as localhost or 192.168.1.20, without scheme, port or path (got "${host}")`
  let url: URL
  try {
    url = new URL(`http://${host}/`)
  } catch {
    return bad
  }
  // Anything the URL parser had to rewrite (a path, a port, userinfo, spaces) was not a bare host.
  return url.host === host.toLowerCase() && !url.port ? true : bad
}

/** `broker test-provider`: an app server that runs the provider's flow through the broker and calls its API. */
export async function testProvider(opts: TestProviderOptions): Promise<TestProviderResult> {
  const preset = loadPreset({ root: opts.root, name: opts.provider, file: opts.presetFile })
  const given = { key: opts.key, secret: opts.secret, host: opts.host }
  const missing = Object.entries(given)
    .filter(([, v]) => !v)
    .map(([k]) => k)
  if (opts.host) {
    const hostOk = checkHost(opts.host)
    if (hostOk !== true) throw brokerError('hostInvalid', { problem: hostOk })
  }
  const asked = await askMissing(missing, (f) => PROMPTS[f]!, { interactive: opts.interactive })
  const { key, secret, host } = { ...given, ...asked } as { key: string; secret: string; host: string }
  const client = new BrokerClient(opts.broker ?? `http://${host}:3000`, { apiKey: opts.apiKey })
  // Say at once that no broker answers, not after the user has opened the app in a browser.
  await client.ping()
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
      // With --once the error ends the command, whose handler shows it: said here too, it read twice.
      if (opts.once)
        return finish(err instanceof BrokerError ? err : brokerError('providerAppFailed', { message: err.message }))
      // A flowFailed message says "The flow failed" itself.
      opts.notify(err.message.startsWith('The flow failed') ? err.message : `The flow failed: ${err.message}`)
    },
  }).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'EADDRINUSE' ? brokerError('portInUse', { port: opts.port }) : err
  })
  const stop = () => finish()
  process.once('SIGINT', stop).once('SIGTERM', stop)
  try {
    opts.notify(
      `${preset.title} (${preset.flow}) through the broker at ${client.url}.\nRegister ${client.url}/callback at the provider, then visit ${app.url}${opts.once ? '' : ' (Ctrl-C to stop)'}`,
    )
    if (opts.open) await openInBrowser(app.url, opts.notify)
    await finished
  } finally {
    process.off('SIGINT', stop).off('SIGTERM', stop)
    await app.close()
  }
  return { provider: preset.name, app: app.url, broker: client.url, calls }
}
