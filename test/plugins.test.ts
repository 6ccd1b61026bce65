import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startCallbackApp, type CallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'

let provider: OAuth2Provider
let app: CallbackApp
let broker: BrokerProcess

beforeAll(async () => {
  ;[provider, app] = await Promise.all([startOAuth2Provider(), startCallbackApp()])
  broker = await startBroker({ args: ['--store', 'memory', '--plugins-dir', 'fixtures/flows'] })
})

afterAll(async () => {
  await Promise.all([broker?.stop(), provider?.stop(), app?.close()])
})

const post = (body: Record<string, string>) =>
  fetch(`${broker.url}/store`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

describe('a user flow plugin from plugins.dir', () => {
  const record = () => ({
    auth_type: 'plain',
    auth_version: '2',
    auth_leg: '3',
    client_id: 'u',
    authorize_url: provider.authorizeUrl,
    access_url: provider.tokenUrl,
    callback: app.callback,
    state: 's1',
    api_key: 'k-secret',
  })

  it('runs through the same contract as the built-ins', async () => {
    const res = await post(record())
    expect(res.status).toBe(200)
    const { hash, url } = (await res.json()) as { hash: string; url: string }
    const check = (await (await fetch(`${broker.url}/hash-check?hash=${hash}`)).json()) as {
      plugin: string
      description: string
      record: Record<string, string>
    }
    expect(check.plugin).toBe('plain_2_3-legged')
    expect(check.description).toMatch(/sample user plugin/)
    expect(check.record.api_key).toBe('[redacted]')
    const done = await new Browser().go(url)
    expect(done.body).toBe('app got it')
    expect(app.received.at(-1)!.query).toMatchObject({ plugin_saw: 'plain plugin', state: 's1' })
    expect(app.received.at(-1)!.query.access_token).toMatch(/^ey/)
  })

  it('uses its own required fields and validate()', async () => {
    const res = await post({ auth_type: 'plain', auth_version: '2', auth_leg: '3', scope: 'a  b' })
    expect(res.status).toBe(400)
    const body = (await res.json()) as { fields: Record<string, string> }
    expect(Object.keys(body.fields).sort()).toEqual(['access_url', 'authorize_url', 'client_id', 'scope'])
  })

  it('names a missing plugin without a path', async () => {
    const res = await post({ auth_type: 'nosuch', auth_version: '2' })
    expect(res.status).toBe(404)
    const text = await res.text()
    expect(JSON.parse(text)).toMatchObject({ code: 'FLOW_PLUGIN_MISSING', plugin: 'nosuch_2' })
    expect(text).not.toMatch(/fixtures|\//)
  })

  it('says a plugin failed to load without naming any path', async () => {
    const res = await post({ auth_type: 'broken', auth_version: '2' })
    expect(res.status).toBe(500)
    const text = await res.text()
    expect(JSON.parse(text)).toMatchObject({ code: 'FLOW_PLUGIN_INVALID', plugin: 'broken_2' })
    // Node's message names the missing file and the importer; the client gets their names only.
    expect(JSON.parse(text).message).toMatch(/no-such-helper\.js.*broken_2\.mjs/)
    expect(text).not.toMatch(/fixtures|\/work|\/tmp|file:/)
  })
})
