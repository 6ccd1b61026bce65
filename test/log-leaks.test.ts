import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { type RedisServer, startRedis } from './helpers/redis.js'

// What a broker writes to stderr while flows run, captured at the most verbose level and at info.
// Secrets must never appear; hashes, states and one-time codes not at info.

const SECRETS = {
  client_secret: 'client-secret-0123456789',
  password: 'user-password-0123456789',
  refresh_token: 'refresh-token-0123456789',
  api_key: 'api-key-0123456789abcdef',
  session_secret: 'session-secret-0123456789abcdef',
  cookie_secret: 'cookie-secret-0123456789abcdef',
  previous_cookie_secret: 'previous-cookie-secret-0123456789',
}

let redis: RedisServer
let provider: OAuth2Provider
let app: CallbackApp

beforeAll(async () => {
  ;[redis, provider, app] = await Promise.all([startRedis(), startOAuth2Provider(), startCallbackApp()])
})
afterAll(async () => {
  await Promise.all([redis?.stop(), provider?.stop(), app?.close()])
})

/** Runs a set of flows (success, code delivery, failure, refusals) and returns every value that must stay out of logs. */
async function runFlows(broker: BrokerProcess): Promise<{ secrets: string[]; ids: string[] }> {
  const auth = { authorization: `Bearer ${SECRETS.api_key}`, 'content-type': 'application/json' }
  const store = async (record: Record<string, string>) => {
    const res = await fetch(`${broker.url}/store`, { method: 'POST', headers: auth, body: JSON.stringify(record) })
    expect(res.status, await res.clone().text()).toBe(200)
    return (await res.json()) as { hash: string; url: string }
  }
  const base = {
    auth_version: '2',
    auth_leg: '3',
    client_id: 'c',
    client_secret: SECRETS.client_secret,
    authorize_url: provider.authorizeUrl,
    access_url: provider.tokenUrl,
    callback: app.callback,
    state: 'app-state-0123456789',
  }
  const ids: string[] = []
  const secrets: string[] = Object.values(SECRETS)

  const query = await store(base)
  const done = await new Browser().go(query.url)
  const delivered = app.received.at(-1)!.query
  secrets.push(delivered.access_token!, provider.tokenRequests.at(-1)!.code_verifier!)
  ids.push(
    query.hash,
    base.state,
    provider.tokenRequests.at(-1)!.code!,
    new URL(done.hops[1]!.url).searchParams.get('state')!,
  )

  const code = await store({ ...base, delivery: 'code' })
  await new Browser().go(code.url)
  const result = app.received.at(-1)!.query.result!
  const redeemed = (await (
    await fetch(`${broker.url}/result`, { method: 'POST', headers: auth, body: JSON.stringify({ result }) })
  ).json()) as { access_token: string }
  secrets.push(redeemed.access_token)
  ids.push(code.hash, result)

  const password = await store({
    auth_flow: 'owner_resources',
    auth_version: '2',
    client_id: 'c',
    client_secret: SECRETS.client_secret,
    access_url: provider.tokenUrl,
    username: 'alice',
    password: SECRETS.password,
  })
  secrets.push(((await (await fetch(password.url)).json()) as { access_token: string }).access_token)
  const refresh = await store({
    auth_version: '2',
    auth_leg: '2',
    grant_type: 'refresh_token',
    refresh_token: SECRETS.refresh_token,
    client_id: 'c',
    client_secret: SECRETS.client_secret,
    access_url: provider.tokenUrl,
  })
  secrets.push(((await (await fetch(refresh.url)).json()) as { access_token: string }).access_token)
  ids.push(password.hash, refresh.hash)

  // Failures and refusals: a provider that is not there, a bad key, a replay, a forged state.
  const failing = await store({ ...base, access_url: 'http://127.0.0.1:9/token' })
  await new Browser().go(failing.url)
  ids.push(failing.hash)
  await fetch(`${broker.url}/store`, {
    method: 'POST',
    headers: { ...auth, authorization: 'Bearer wrong-key-0123456789' },
    body: JSON.stringify(base),
  })
  await fetch(query.url)
  await fetch(`${broker.url}/callback?state=forged.x&code=stolen-code-0123456789`)
  await fetch(`${broker.url}/hash-check?hash=${query.hash}`)
  return { secrets, ids }
}

const brokerEnv = {
  BROKER_API_KEYS: SECRETS.api_key,
  BROKER_SESSION_SECRET: SECRETS.session_secret,
  BROKER_COOKIE_SECRET: SECRETS.cookie_secret,
  BROKER_COOKIE_PREVIOUSSECRETS: SECRETS.previous_cookie_secret,
}

/** Runs the flows against a broker at `level` and returns its stderr and the values to look for. */
async function capture(level: 'trace' | 'info'): Promise<{ log: string; secrets: string[]; ids: string[] }> {
  const broker = await startBroker({
    args: ['--store', 'redis', '--store-port', String(redis.port), '--log-level', level],
    env: brokerEnv,
  })
  try {
    return { ...(await runFlows(broker)), log: broker.stderr() }
  } finally {
    await broker.stop()
  }
}

describe('logs', () => {
  it('never contain a secret, even at trace level', async () => {
    const { log, secrets } = await capture('trace')
    // The capture works: request lines and the failed flow are there.
    expect(log).toMatch(/"msg":"request"/)
    expect(log).toMatch(/"msg":"flow failed"/)
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(8)
      expect(log).not.toContain(secret)
    }
  })

  it('never contain hashes, states or one-time codes at info level', async () => {
    const { log, secrets, ids } = await capture('info')
    expect(log).toMatch(/"msg":"flow failed"/)
    for (const value of [...secrets, ...ids]) {
      expect(value.length).toBeGreaterThan(8)
      expect(log).not.toContain(value)
    }
  })
})
