import { generateKeyPairSync } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { storeAt } from './helpers/flow-suite.js'
import { type OAuth1Provider, startOAuth1Provider } from './helpers/oauth1-provider.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { type RedisServer, startRedis } from './helpers/redis.js'

// What a Redis dump (a replica, a backup, `redis-cli`) holds after the broker kept flows of every
// kind, one of them run to `delivery: code` with its result still waiting: no secret, no token, no
// PKCE verifier, no session hash, no result code, no request token, no state.
let redis: RedisServer
let broker: BrokerProcess
let provider: OAuth2Provider
let provider1: OAuth1Provider
let app: CallbackApp

beforeAll(async () => {
  ;[redis, provider, provider1, app] = await Promise.all([
    startRedis(),
    startOAuth2Provider(),
    startOAuth1Provider(),
    startCallbackApp(),
  ])
  provider1.addConsumer({ key: 'rest-consumer', secret: 'CONSUMER-SECRET-1a2b3c' })
  broker = await startBroker({ args: ['--store', 'redis', '--store-port', String(redis.port)] })
})
afterAll(async () => {
  await broker?.stop()
  await Promise.all([redis?.stop(), provider?.stop(), provider1?.stop(), app?.close()])
})

/** Every key and value in Redis, as text. */
async function dump(): Promise<string> {
  const client = new Redis({ port: redis.port })
  try {
    const out: string[] = []
    for (const key of await client.keys('*')) {
      const type = await client.type(key)
      const value = type === 'string' ? await client.get(key) : JSON.stringify(await client.call('DUMP', key))
      out.push(key, value ?? '')
    }
    return out.join('\n')
  } finally {
    client.disconnect()
  }
}

describe('the store at rest', () => {
  it('holds no secret, token, verifier, hash, state or code after flows of every kind', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 })
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
    const secrets = [
      'CLIENT-SECRET-9f8e7d',
      'CONSUMER-SECRET-1a2b3c',
      'PASSWORD-5d6c7b',
      'REFRESH-TOKEN-4e3d2c',
      'OAUTH-TOKEN-SECRET-77aa',
      pem.split('\n')[1]!,
    ]
    const hashes: string[] = []
    const keep = async (record: Record<string, string>) => {
      const stored = await storeAt(broker.url, record)
      hashes.push(stored.hash)
      return stored
    }
    const oauth2 = {
      client_id: 'rest-client',
      client_secret: 'CLIENT-SECRET-9f8e7d',
      authorize_url: provider.authorizeUrl,
      access_url: provider.tokenUrl,
    }
    const consumer = { consumer_key: 'rest-consumer', consumer_secret: 'CONSUMER-SECRET-1a2b3c' }

    // One OAuth 2 flow run to the end, its result waiting under a one-time code.
    const code = await keep({
      auth_version: '2',
      auth_leg: '3',
      ...oauth2,
      callback: app.callback,
      delivery: 'code',
      state: 'APP-STATE-0a0b',
    })
    const res = await new Browser().go(code.url)
    expect(res.body).toBe('app got it')
    const resultCode = app.received.at(-1)!.query.result!
    expect(resultCode).toMatch(/^[\w-]{32}$/)
    const verifier = provider.tokenRequests.at(-1)!.code_verifier!
    expect(verifier).toBeTruthy()

    // Flows stored and left waiting, of every other kind.
    await keep({ auth_version: '2', auth_leg: '3', ...oauth2, callback: app.callback })
    await keep({ auth_version: '2', auth_leg: '2', ...oauth2, callback: app.callback })
    await keep({
      auth_version: '2',
      auth_leg: '2',
      grant_type: 'refresh_token',
      refresh_token: 'REFRESH-TOKEN-4e3d2c',
      ...oauth2,
    })
    await keep({
      auth_flow: 'owner_resources',
      auth_version: '2',
      ...oauth2,
      username: 'alice',
      password: 'PASSWORD-5d6c7b',
      callback: app.callback,
    })
    await keep({
      auth_version: '1',
      auth_leg: '2',
      ...consumer,
      request_url: provider1.requestUrl,
      access_url: provider1.accessUrl,
    })
    await keep({
      auth_version: '1',
      auth_leg: '1',
      ...consumer,
      oauth_token: 'tok',
      oauth_token_secret: 'OAUTH-TOKEN-SECRET-77aa',
    })
    await keep({
      auth_version: '1',
      auth_leg: '1',
      consumer_key: 'rsa-consumer',
      signature_method: 'RSA-SHA1',
      private_key: pem,
    })
    await keep({
      auth_flow: 'echo',
      auth_version: '1',
      ...consumer,
      oauth_token: 'tok',
      oauth_token_secret: 'OAUTH-TOKEN-SECRET-77aa',
      verify_url: 'https://api.example.com/verify',
    })
    // An OAuth 1.0a 3-legged flow left at the provider: its request token is correlated in the store.
    const three = await keep({
      auth_version: '1',
      auth_leg: '3',
      ...consumer,
      request_url: provider1.requestUrl,
      authorize_url: provider1.authorizeUrl,
      access_url: provider1.accessUrl,
      callback: app.callback,
    })
    const started = await fetch(three.url, { redirect: 'manual' })
    expect(started.status).toBe(302)
    const authorize = new URL(started.headers.get('location')!)
    const requestToken = authorize.searchParams.get('oauth_token')!
    expect(requestToken).toBeTruthy()
    // And a prepared OAuth 2 start URL: its redirect (with the state and PKCE challenge) is kept too.
    const prepared = await keep({ auth_version: '2', auth_leg: '3', ...oauth2, callback: app.callback })
    const preparedStart = await fetch(prepared.url, { redirect: 'manual' })
    const state = new URL(preparedStart.headers.get('location')!).searchParams.get('state')!
    expect(state).toBeTruthy()

    const text = await dump()
    expect(text.length).toBeGreaterThan(0)
    for (const value of [
      ...secrets,
      ...hashes,
      resultCode,
      verifier,
      requestToken,
      state,
      'APP-STATE-0a0b',
      'rest-client',
      'rest-consumer',
    ]) {
      expect(text, `the dump shows ${value.slice(0, 12)}…`).not.toContain(value)
    }
    // The result still waits, and opens with its code.
    const redeemed = await fetch(`${broker.url}/result`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ result: resultCode }),
    })
    expect(redeemed.status).toBe(200)
    expect(((await redeemed.json()) as Record<string, string>).access_token).toMatch(/^ey/)
  })
})
