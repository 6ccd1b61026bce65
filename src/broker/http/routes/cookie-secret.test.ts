import type { Redis } from 'ioredis'
import RedisMock from 'ioredis-mock'
import { afterEach, describe, expect, it } from 'vitest'
import { configSchema, type ConfigInput } from '../../../config/schema.js'
import { resolveSecrets } from '../../../services/serve/secrets.js'
import { type Broker, createBroker } from '../../index.js'
import { buildServer } from '../build.js'

// Instances (or one deploy and the next) on one store, each with its own cookie settings: what the
// cookie of a flow started on one is worth at /callback on another.
const SESSION = 'the session secret all instances share'
const OLD = 'the cookie secret before the deploy'
const NEW = 'the cookie secret after the deploy'
const shared = new RedisMock() as unknown as Redis
const opened: Broker[] = []

async function instance(cookie: ConfigInput['cookie']) {
  const config = configSchema.parse({ log: { level: 'silent' }, session: { secret: SESSION }, cookie })
  const broker = await createBroker(resolveSecrets(config).config, 'memory', { redis: shared })
  opened.push(broker)
  return buildServer(broker)
}
afterEach(async () => {
  for (const b of opened.splice(0)) await b.close()
})

/** A flow stored and started on `app`: its binding cookie and its callback URL (the user declined at the provider). */
async function started(app: Awaited<ReturnType<typeof instance>>) {
  const stored = await app.inject({
    method: 'POST',
    url: '/store',
    payload: {
      auth_version: '2',
      auth_leg: '3',
      client_id: 'cid',
      authorize_url: 'http://127.0.0.1:9/authorize',
      access_url: 'http://127.0.0.1:9/token',
      callback: 'http://localhost:5999/cb',
    },
  })
  const start = await app.inject({ url: `/start?hash=${stored.json().hash}` })
  const state = new URL(start.headers.location as string).searchParams.get('state')!
  return {
    cookie: String(start.headers['set-cookie']).split(';')[0]!,
    callback: `/callback?error=access_denied&state=${encodeURIComponent(state)}`,
  }
}
/** What the app is told: the callback's redirect to it, or the broker's own refusal. */
const outcome = (res: { statusCode: number; headers: Record<string, unknown>; json: () => { code?: string } }) =>
  res.statusCode === 302 ? new URL(res.headers.location as string).searchParams.get('error') : res.json().code

describe('cookie.secret', () => {
  it('keys the binding cookie: a cookie made under another cookie.secret is refused (COOKIE_MISMATCH)', async () => {
    const before = await instance({ secret: OLD })
    const after = await instance({ secret: NEW })
    const flow = await started(before)
    expect(outcome(await after.inject({ url: flow.callback, headers: { cookie: flow.cookie } }))).toBe(
      'COOKIE_MISMATCH',
    )
    expect(outcome(await before.inject({ url: flow.callback, headers: { cookie: flow.cookie } }))).toBe('access_denied')
  })

  it('rotates: with the old secret in cookie.previousSecrets a flow started before the deploy completes', async () => {
    const flow = await started(await instance({ secret: OLD }))
    const after = await instance({ secret: NEW, previousSecrets: [OLD] })
    expect(outcome(await after.inject({ url: flow.callback, headers: { cookie: flow.cookie } }))).toBe('access_denied')
  })

  it('is keyed by session.secret while unset: setting it with session.secret in previousSecrets refuses no flow', async () => {
    const unset = await instance(undefined)
    const [a, b] = [await started(unset), await started(unset)]
    expect(
      outcome(await (await instance({ secret: NEW })).inject({ url: a.callback, headers: { cookie: a.cookie } })),
    ).toBe('COOKIE_MISMATCH')
    const set = await instance({ secret: NEW, previousSecrets: [SESSION] })
    expect(outcome(await set.inject({ url: b.callback, headers: { cookie: b.cookie } }))).toBe('access_denied')
  })
})
