import { randomBytes } from 'node:crypto'
import { createServer, type Server, type ServerResponse } from 'node:http'
import { isBrokerError } from '../../errors/index.js'
import type { BrokerClient } from '../broker-client.js'
import { deliveredResult } from '../store/capture.js'
import { FLOW_PRESETS } from '../store/presets.js'
import { type ApiCall, type Credentials, callApi } from './api.js'
import type { ProviderPreset } from './preset.js'
import { renderApiCall } from './render.js'

export interface ProviderApp {
  /** http://<host>:<port>/ — visiting it starts the flow. */
  url: string
  close(): Promise<void>
}

export interface ProviderAppOptions {
  preset: ProviderPreset
  creds: Credentials
  host: string
  port: number
  client: BrokerClient
  /** Scopes replacing the preset's. */
  scopes?: string[]
  onCall(call: ApiCall): void
  onError(err: Error): void
}

/** The record the app stores for a visit: the preset's flow and fields, the credentials, its own callback. */
export function providerRecord(
  preset: ProviderPreset,
  creds: Credentials,
  callback: string,
  scopes?: string[],
): Record<string, unknown> {
  const flow = FLOW_PRESETS[preset.flow]!
  const record: Record<string, unknown> = {
    ...flow.fields,
    ...preset.record,
    callback,
    delivery: 'code',
    state: randomBytes(9).toString('base64url'),
  }
  if (flow.fields.auth_version === '1')
    Object.assign(record, { consumer_key: creds.key, consumer_secret: creds.secret })
  else {
    Object.assign(record, { client_id: creds.key, client_secret: creds.secret })
    const list = scopes?.length ? scopes : preset.scopes
    if (list.length) record.scope = list.join(preset.scope_separator)
    if (!preset.pkce) record.pkce = false
    if (Object.keys(preset.authorize_params).length) record.authorize_params = preset.authorize_params
  }
  return record
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '[::1]'])

/** Guardian's test script as a server: `/` stores the flow and redirects to its start URL; `/callback` calls the API. */
export async function startProviderApp(opts: ProviderAppOptions): Promise<ProviderApp> {
  const base = `http://${opts.host}:${opts.port}`
  const page = (res: ServerResponse, status: number, title: string, text: string) =>
    res
      .writeHead(status, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'referrer-policy': 'no-referrer',
      })
      .end(
        `<!doctype html><meta charset="utf-8"><title>${title}</title><h1>${title}</h1><pre>${text.replace(/[&<>]/g, (c) => `&#${c.charCodeAt(0)};`)}</pre>`,
      )

  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', base).pathname
    if (path === '/') {
      opts.client.store(providerRecord(opts.preset, opts.creds, `${base}/callback`, opts.scopes)).then(
        (stored) => res.writeHead(302, { location: stored.url, 'cache-control': 'no-store' }).end(),
        (err: Error) => {
          opts.onError(err)
          page(res, 502, 'The broker refused the flow', err.message)
        },
      )
      return
    }
    if (path !== '/callback') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not here.')
    deliveredResult(req, opts.client)
      .then((captured) => callApi(opts.preset, captured.result, opts.creds))
      .then(
        (call) => {
          opts.onCall(call)
          page(res, 200, `${opts.preset.title} answered ${call.response.status}`, renderApiCall(call))
        },
        (err: Error) => {
          opts.onError(err)
          page(res, isBrokerError(err) ? 200 : 502, 'The flow failed', err.message)
        },
      )
  })
  // A localhost host needs no wider listener; any other host is how other machines reach it.
  const listen = LOOPBACK.has(opts.host) ? '127.0.0.1' : '0.0.0.0'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port, listen, () => resolve())
  })
  return {
    url: `${base}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections()),
  }
}
