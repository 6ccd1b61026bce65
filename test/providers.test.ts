import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, runCli, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { type QuirkyProvider, startQuirkyProvider } from './helpers/quirky-provider.js'

// Token answers and authorization responses the way real providers send them.
const QUIRKS = {
  salesforce: {
    token: {
      body: {
        access_token: '00Dx!AQ',
        instance_url: 'https://acme.my.salesforce.com',
        id: 'https://login.salesforce.com/id/00Dx/005x',
        issued_at: '1700000000000',
        signature: 'c2ln',
        token_type: 'Bearer',
      },
    },
  },
  slack: {
    token: {
      body: {
        ok: true,
        app_id: 'A1',
        authed_user: { id: 'U1', scope: 'chat:write', access_token: 'xoxp-user', token_type: 'user' },
        team: { id: 'T1', name: 'Acme' },
        enterprise: null,
        is_enterprise_install: false,
      },
    },
  },
  slackerror: { token: { body: { ok: false, error: 'invalid_code' } } },
  notionerror: {
    token: { status: 400, body: { object: 'error', status: 400, code: 'invalid_grant', message: 'Invalid code.' } },
  },
  quickbooks: {
    authorize: { realmId: '9130', access_token: 'front-channel', x_refresh_token_expires_in: '1' },
    token: {
      body: {
        access_token: 'qb-at',
        refresh_token: 'qb-rt',
        token_type: 'bearer',
        expires_in: 3600,
        x_refresh_token_expires_in: 8726400,
      },
    },
  },
  apple: {
    formPost: true,
    authorize: { user: '{"name":{"firstName":"Ada","lastName":"L"},"email":"ada@example.com"}' },
    token: { body: { access_token: 'apple-at', token_type: 'Bearer', expires_in: 3600 } },
  },
  microsoft: {
    token: {
      body: {
        token_type: 'Bearer',
        scope: 'User.Read',
        expires_in: 3599,
        ext_expires_in: 3599,
        access_token: 'ms-at',
        refresh_token: 'ms-rt',
      },
    },
  },
  squareerror: {
    token: {
      status: 401,
      body: { errors: [{ category: 'AUTHENTICATION_ERROR', code: 'UNAUTHORIZED', detail: 'Bad client' }] },
    },
  },
  redirect: {
    token: { status: 302, body: '', headers: { location: 'https://login.example/sso?session=secret' } },
  },
  spoof: {
    authorize: { broker_error: 'FAILED', id_token: 'forged' },
    token: {
      body: { access_token: 'at', state: 'evil', error_description: 'x', broker_error: 'FAILED', result: 'r1' },
    },
  },
} as const

let broker: BrokerProcess
let provider: QuirkyProvider
let app: CallbackApp

beforeAll(async () => {
  const pidDir = `${mkdtempSync(join(tmpdir(), 'broker-providers-'))}/`
  ;[broker, provider, app] = await Promise.all([
    startBroker({ args: ['--store', 'memory', '--pid-dir', pidDir] }),
    startQuirkyProvider(QUIRKS),
    startCallbackApp(),
  ])
})

afterAll(async () => {
  await Promise.all([broker?.stop(), provider?.close(), app?.close()])
})

async function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${broker.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

async function store(record: Record<string, unknown>): Promise<string> {
  const { status, json } = await post('/store', record)
  expect(status, JSON.stringify(json)).toBe(200)
  return String(json.url)
}

const threeLegged = (quirk: keyof typeof QUIRKS, extra: Record<string, unknown> = {}) => ({
  auth_version: '2',
  auth_leg: '3',
  client_id: 'client',
  client_secret: 'secret',
  authorize_url: provider.authorizeUrl(quirk),
  access_url: provider.tokenUrl(quirk),
  callback: app.callback,
  state: 'app-state',
  ...extra,
})

/** Runs a 3-legged flow in a browser; what the app's callback received (query delivery). */
async function runQuery(quirk: keyof typeof QUIRKS, extra: Record<string, unknown> = {}) {
  const before = app.received.length
  const page = await new Browser().go(await store(threeLegged(quirk, extra)))
  expect(page.status).toBe(200)
  expect(app.received.length).toBe(before + 1)
  return app.received.at(-1)!.query
}

/** Runs a 3-legged flow with `delivery: code` and redeems the code at POST /result. */
async function runCode(quirk: keyof typeof QUIRKS, extra: Record<string, unknown> = {}) {
  await new Browser().go(await store(threeLegged(quirk, { ...extra, delivery: 'code' })))
  const { status, json } = await post('/result', { result: app.received.at(-1)!.query.result })
  expect(status).toBe(200)
  return json
}

/** Runs a 3-legged flow with `delivery: form_post`: the fields of the broker's auto-posting form. */
async function runForm(quirk: keyof typeof QUIRKS, extra: Record<string, unknown> = {}) {
  const page = await new Browser().go(await store(threeLegged(quirk, { ...extra, delivery: 'form_post' })))
  return formFields(page.body)
}

/** The fields of the broker's auto-posting form. */
function formFields(html: string): Record<string, string> {
  const unescape = (s: string) => s.replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n)))
  return Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((m) => [
      unescape(m[1]!),
      unescape(m[2]!),
    ]),
  )
}

describe('every field the provider sent reaches the app', () => {
  it("Salesforce's instance_url in query, form_post, code and a 2-legged JSON answer", async () => {
    const query = await runQuery('salesforce')
    expect(query).toMatchObject({
      access_token: '00Dx!AQ',
      instance_url: 'https://acme.my.salesforce.com',
      id: 'https://login.salesforce.com/id/00Dx/005x',
      issued_at: '1700000000000',
      state: 'app-state',
    })

    expect(await runForm('salesforce')).toMatchObject({
      instance_url: 'https://acme.my.salesforce.com',
      signature: 'c2ln',
    })

    expect(await runCode('salesforce')).toMatchObject({
      instance_url: 'https://acme.my.salesforce.com',
      token_type: 'Bearer',
    })

    const start = await store({
      auth_version: '2',
      auth_leg: '2',
      client_id: 'c',
      client_secret: 's',
      access_url: provider.tokenUrl('salesforce'),
    })
    const direct = (await (await fetch(start)).json()) as Record<string, unknown>
    expect(direct).toMatchObject({ access_token: '00Dx!AQ', instance_url: 'https://acme.my.salesforce.com' })
  })

  it("Slack's user token by a dotted access_name; objects as JSON text in query and form_post, as objects in code", async () => {
    const slack = { access_name: 'authed_user.access_token' }
    const query = await runQuery('slack', slack)
    expect(query.access_token).toBe('xoxp-user')
    expect(JSON.parse(query.authed_user!)).toMatchObject({ id: 'U1', token_type: 'user' })
    expect(JSON.parse(query.team!)).toEqual({ id: 'T1', name: 'Acme' })
    expect(query.is_enterprise_install).toBe('false')
    expect(query).not.toHaveProperty('enterprise')

    expect(JSON.parse((await runForm('slack', slack)).team!)).toEqual({ id: 'T1', name: 'Acme' })

    expect(await runCode('slack', slack)).toMatchObject({
      access_token: 'xoxp-user',
      team: { id: 'T1', name: 'Acme' },
      is_enterprise_install: false,
    })
  })

  it("QuickBooks' realmId from the authorization response; the token answer wins, the front channel gives no token", async () => {
    const query = await runQuery('quickbooks')
    expect(query).toMatchObject({
      realmId: '9130',
      access_token: 'qb-at',
      x_refresh_token_expires_in: '8726400',
      state: 'app-state',
    })
    expect(query).not.toHaveProperty('code')
  })

  it("Apple's one-time user, posted back with the code (response_mode=form_post)", async () => {
    const browser = new Browser()
    const before = app.received.length
    const page = await browser.go(
      await store(threeLegged('apple', { authorize_params: { response_mode: 'form_post' } })),
    )
    // The provider's page posts the authorization response to the broker's /callback, as a browser would.
    const action = /action="([^"]+)"/.exec(page.body)![1]!
    const done = await browser.go(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(formFields(page.body)).toString(),
    })
    expect(done.status).toBe(200)
    expect(app.received.length).toBe(before + 1)
    const query = app.received.at(-1)!.query
    expect(JSON.parse(query.user!)).toMatchObject({ name: { firstName: 'Ada' }, email: 'ada@example.com' })
    expect(query).toMatchObject({ access_token: 'apple-at', state: 'app-state' })
  })

  it("Microsoft's ext_expires_in, a number in a code delivery", async () => {
    expect(await runCode('microsoft')).toMatchObject({ expires_in: 3599, ext_expires_in: 3599, refresh_token: 'ms-rt' })
  })

  it("never lets a provider field pass for the broker's own parameters", async () => {
    const query = await runQuery('spoof')
    expect(query).toEqual({ access_token: 'at', state: 'app-state' })
  })
})

describe("the provider's own error reaches the app", () => {
  it.each([
    ['slackerror', 'invalid_code', 'The token endpoint answered 200 with invalid_code'],
    ['notionerror', 'invalid_grant', 'Invalid code.'],
    ['squareerror', 'UNAUTHORIZED', 'Bad client'],
    [
      'redirect',
      'server_error',
      'The token endpoint redirected (HTTP 302 to https://login.example/sso) instead of answering; check access_url',
    ],
  ] as const)('%s', async (quirk, error, description) => {
    const query = await runQuery(quirk)
    expect(query).toMatchObject({ error, error_description: description, broker_error: 'PROVIDER_ERROR' })
    expect(query).not.toHaveProperty('access_token')
  })
})

describe('provider catalogue at POST /store', () => {
  const hashCheck = async (url: string) => {
    const hash = new URL(url).searchParams.get('hash')
    const res = await fetch(`${broker.url}/hash-check?hash=${hash}`)
    return ((await res.json()) as { record: Record<string, unknown>; plugin: string }).record
  }

  it("fills a provider's URLs and flow from the catalogue", async () => {
    const record = await hashCheck(await store({ provider: 'github', client_id: 'c', callback: app.callback }))
    expect(record).toMatchObject({
      provider: 'github',
      auth_version: '2',
      auth_leg: '3',
      authorize_url: 'https://github.com/login/oauth/authorize',
      access_url: 'https://github.com/login/oauth/access_token',
    })
    const okta = await hashCheck(
      await store({ provider: 'okta', subdomain: 'acme', client_id: 'c', scope: ['openid', 'email'] }),
    )
    expect(okta).toMatchObject({ access_url: 'https://acme.okta.com/oauth2/v1/token', scope: 'openid email' })
    const facebook = await hashCheck(
      await store({ provider: 'facebook', client_id: 'c', scope: ['email', 'public_profile'] }),
    )
    expect(facebook.scope).toBe('email,public_profile')
  })

  it('refuses an unknown provider and a missing subdomain, naming the field', async () => {
    const unknown = await post('/store', { provider: 'myspace', client_id: 'c' })
    expect(unknown.status).toBe(400)
    expect(unknown.json).toMatchObject({ code: 'VALIDATION', fields: { provider: expect.stringContaining('myspace') } })
    const okta = await post('/store', { provider: 'okta', client_id: 'c' })
    expect(okta.status).toBe(400)
    expect(okta.json).toMatchObject({
      code: 'VALIDATION',
      fields: { subdomain: expect.stringMatching(/^is required by provider "okta"/) },
    })
  })

  it("uses the preset's profile_url for profile: true, and judges it by providers.allow only then", async () => {
    const github = { provider: 'github', client_id: 'c', callback: app.callback }
    expect(await hashCheck(await store({ ...github, profile: true }))).toMatchObject({
      profile: true,
      profile_url: 'https://api.github.com/user',
    })
    expect((await hashCheck(await store(github))).profile_url).toBeUndefined()
    const strict = await startBroker({
      args: ['--store', 'memory', '--providers-allow', 'https://github.com/login/oauth/'],
    })
    try {
      const at = (record: Record<string, unknown>) =>
        fetch(`${strict.url}/store`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(record),
        })
      expect((await at(github)).status).toBe(200)
      const refused = await at({ ...github, profile: true })
      const body = (await refused.json()) as { code: string; message: string }
      expect(refused.status).toBe(400)
      expect(body.code).toBe('PROVIDER_NOT_ALLOWED')
      expect(body.message).toContain('profile_url')
    } finally {
      await strict.stop()
    }
  })

  it("keeps a preset's knowledge under the record's own URLs: x2 authenticates with HTTP Basic", async () => {
    const before = provider.tokenRequests.length
    const query = await runQuery('microsoft', { provider: 'x2', auth_version: undefined, auth_leg: undefined })
    expect(query.access_token).toBe('ms-at')
    const seen = provider.tokenRequests.slice(before)
    expect(seen).toHaveLength(1)
    expect(seen[0]!.headers.authorization).toBe(`Basic ${Buffer.from('client:secret').toString('base64')}`)
  })

  it('broker store --flow <provider> fills the URLs on the CLI side; --list-providers lists the catalogue', async () => {
    const stored = await runCli([
      'store',
      '--flow',
      'okta',
      '--subdomain',
      'acme.eu',
      '--client-id',
      'c',
      '--callback',
      app.callback,
      '--broker',
      broker.url,
      '--json',
    ])
    expect(stored.code, stored.stderr).toBe(0)
    const record = await hashCheck(JSON.parse(stored.stdout).url)
    expect(record).toMatchObject({ provider: 'okta', authorize_url: 'https://acme.eu.okta.com/oauth2/v1/authorize' })

    const list = await runCli(['store', '--list-providers', '--json'])
    expect(list.code).toBe(0)
    const providers = (JSON.parse(list.stdout) as { providers: Array<{ name: string; oauth: number }> }).providers
    expect(providers.length).toBeGreaterThan(200)
    expect(providers.find((p) => p.name === 'twitter')?.oauth).toBe(1)
  })
})
