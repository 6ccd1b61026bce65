import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BrokerProcess, runCli, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { spawnCli } from './helpers/cli.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { freePort, waitFor } from './helpers/ports.js'

let broker: BrokerProcess
let provider: OAuth2Provider
const env = () => ({ BROKER_URL: broker.url })

beforeAll(async () => {
  ;[broker, provider] = await Promise.all([startBroker({ args: ['--store', 'memory'] }), startOAuth2Provider()])
})
afterAll(async () => {
  await Promise.all([broker?.stop(), provider?.stop()])
})

/** `broker store`'s arguments for an OAuth 2 code flow at the test provider, for `clientId`; `more` adds flags. */
const oauth2Store = (clientId: string, ...more: string[]) => [
  'store',
  '--flow',
  'oauth2-3',
  '--client-id',
  clientId,
  '--authorize-url',
  provider.authorizeUrl,
  '--access-url',
  provider.tokenUrl,
  ...more,
]

/** `broker store`'s arguments for an OAuth 2 client credentials flow (no user step) at `accessUrl`; `more` adds flags. */
const oauth2Client = (clientId: string, secret: string, accessUrl: string, ...more: string[]) => [
  'store',
  '--flow',
  'oauth2-2',
  '--client-id',
  clientId,
  '--client-secret',
  secret,
  '--access-url',
  accessUrl,
  ...more,
]

const hashCheck = async (hash: string) =>
  (await (await fetch(`${broker.url}/hash-check?hash=${hash}`)).json()) as {
    plugin: string
    record: Record<string, unknown>
  }

describe('broker store', () => {
  it('stores a flow from flags and prints the hash, start URL and expiry', async () => {
    const { code, stdout, stderr } = await runCli(
      oauth2Store('cli-client', '--scope', 'openid', '--callback', 'http://localhost:9/cb'),
      { env: env() },
    )
    expect(code, stderr).toBe(0)
    const hash = stdout.match(/hash\s+(\S+)/)![1]!
    expect(stdout).toContain(`start URL  http://localhost:${broker.port}/start?hash=${hash}`)
    expect(stdout).toMatch(/expires\s+in \d+ s \(\d{4}-/)
    const check = await hashCheck(hash)
    expect(check.plugin).toBe('oauth_2_3-legged')
    expect(check.record).toMatchObject({
      client_id: 'cli-client',
      scope: 'openid',
      auth_version: '2',
      auth_leg: '3',
      callback: 'http://localhost:9/cb',
    })
  })

  it('takes a whole record from --file, flags overriding it, and prints JSON with --json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-store-'))
    const file = join(dir, 'record.json')
    writeFileSync(
      file,
      JSON.stringify({
        auth_version: 2,
        auth_leg: 2,
        client_id: 'from-file',
        client_secret: 'file-secret',
        access_url: provider.tokenUrl,
        scope: 'file-scope',
      }),
    )
    const { code, stdout, stderr } = await runCli(
      ['store', '--file', file, '--scope', 'flag-scope', '--field', 'access_name=access_token', '--json'],
      { env: env() },
    )
    expect(code, stderr).toBe(0)
    const out = JSON.parse(stdout)
    expect(out).toMatchObject({ plugin: 'oauth_2_2-legged', url: expect.stringContaining(`/start?hash=${out.hash}`) })
    expect(out.expires_in).toBeGreaterThan(0)
    const check = await hashCheck(out.hash)
    expect(check.record).toMatchObject({
      client_id: 'from-file',
      scope: 'flag-scope',
      access_name: 'access_token',
      client_secret: '[redacted]',
    })
  })

  it('takes --profile and --dpop as switches (--no-profile), and still the older --profile true', async () => {
    const store = async (...extra: string[]) => {
      const r = await runCli(
        oauth2Store(
          'switches',
          '--callback',
          'http://localhost:9/cb',
          '--profile-url',
          'https://provider.example/userinfo',
          '--json',
          ...extra,
        ),
        { env: env() },
      )
      expect(r.code, r.stdout).toBe(0)
      return (await hashCheck((JSON.parse(r.stdout) as { hash: string }).hash)).record
    }
    expect(await store('--profile', '--dpop', '--delivery', 'code')).toMatchObject({ profile: 'true', dpop: 'true' })
    expect(await store('--no-profile')).toMatchObject({ profile: 'false' })
    expect(await store('--profile', 'true', '--dpop=false')).toMatchObject({ profile: 'true', dpop: 'false' })
  })

  it('exits 2 listing every missing field when there is no terminal', async () => {
    const { code, stdout, stderr } = await runCli(['store', '--flow', 'oauth1-3', '--consumer-key', 'ck'], {
      env: env(),
    })
    expect(code).toBe(2)
    expect(stdout).toBe('')
    for (const field of [
      'request_url (--request-url)',
      'authorize_url (--authorize-url)',
      'access_url (--access-url)',
      'consumer_secret (--consumer-secret)',
    ])
      expect(stderr).toContain(field)
    expect(stderr).toContain('MISSING_FIELDS')
  })

  it("without a terminal, a confidential client's missing secret is exit 2 naming --client-secret; a public client stores", async () => {
    const xdg = { ...env(), XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'broker-xdg-')) }
    const args = [
      ...['store', '--flow', 'oauth2-3', '--client-id', 'no-tty', '--callback', 'http://localhost:8080/done'],
      ...['--authorize-url', 'https://provider.example/authorize', '--access-url', 'https://provider.example/token'],
    ]
    const confidential = await runCli([...args, '--client-auth', 'client_secret_basic'], { env: xdg })
    expect(confidential.code).toBe(2)
    expect(confidential.stdout).toBe('')
    expect(confidential.stderr).toContain(
      'Error MISSING_FIELDS: Missing required field: client_secret (--client-secret).',
    )
    const json = await runCli([...args, '--client-auth', 'basic', '--json'], { env: xdg })
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout).error.code).toBe('MISSING_FIELDS')
    const pkceOnly = await runCli(args, { env: xdg })
    expect(pkceOnly.stderr).not.toMatch(/client_secret/)
    expect(pkceOnly.code).toBe(0)
  })

  it('says in one line which URL it tried when no broker answers', async () => {
    const port = await freePort()
    const { code, stderr } = await runCli(
      oauth2Client('c', 's', provider.tokenUrl, '--broker', `http://127.0.0.1:${port}`),
    )
    expect(code).toBe(1)
    expect(stderr.split('\n')[0]).toMatch(
      new RegExp(`^Error BROKER_UNREACHABLE: No broker answers at http://127.0.0.1:${port} `),
    )
  })

  it('refuses a broker URL that is not http(s), from the flag or BROKER_URL, as a usage error', async () => {
    const args = oauth2Client('c', 's', provider.tokenUrl)
    const flag = await runCli([...args, '--broker', 'localhost:3000', '--json'])
    expect(flag.code).toBe(2)
    expect(JSON.parse(flag.stdout).error).toEqual({
      code: 'USAGE',
      message: '--broker (or BROKER_URL) must be an http(s) URL such as http://localhost:3000 (got "localhost:3000").',
    })
    const fromEnv = await runCli(args, { env: { BROKER_URL: 'not a url' } })
    expect(fromEnv.code).toBe(2)
    expect(fromEnv.stderr).toBe(
      'Error USAGE: --broker (or BROKER_URL) must be an http(s) URL such as http://localhost:3000 (got "not a url").\n',
    )
  })

  it('sends --authorize-params given as JSON as parameters; anything else is exit 2 naming the flag', async () => {
    const args = (params: string) => [
      ...['store', '--flow', 'oauth2-3', '--client-id', 'c', '--callback', 'http://localhost:9/cb'],
      ...['--authorize-url', provider.authorizeUrl, '--access-url', provider.tokenUrl, '--json'],
      ...['--authorize-params', params],
    ]
    const ok = await runCli(args('{"prompt":"consent"}'), { env: env() })
    expect(ok.code, ok.stderr).toBe(0)
    const { hash } = JSON.parse(ok.stdout) as { hash: string }
    expect((await hashCheck(hash)).record.authorize_params).toEqual({ prompt: 'consent' })
    const bad = await runCli(args('{"prompt":consent}'), { env: env() })
    expect(bad.code).toBe(2)
    expect(bad.stdout).toMatch(/VALIDATION/)
    expect(bad.stdout).toMatch(/authorize_params/)
  })

  it("passes the broker's validation error through with exit 2", async () => {
    const { code, stderr } = await runCli(oauth2Store('c', '--callback', 'https://evil.example/cb'), { env: env() })
    expect(code).toBe(2)
    expect(stderr).toContain('CALLBACK_NOT_ALLOWED')
  })
})

describe('broker store --open', () => {
  const dir = mkdtempSync(join(tmpdir(), 'broker-open-'))
  const opened = join(dir, 'opened.txt')
  // xdg-open (bundled with `open`) runs $BROWSER: a script that records the URL it was given.
  const browser = join(dir, 'browser.sh')
  const noDesktop = { DISPLAY: '', WAYLAND_DISPLAY: '', XDG_CURRENT_DESKTOP: '' }
  writeFileSync(browser, `#!/bin/sh\necho "$1" >> ${opened}\n`, { mode: 0o755 })
  const args = [
    'store',
    '--flow',
    'oauth2-3',
    '--client-id',
    'op',
    '--authorize-url',
    'http://provider.example/a',
    '--access-url',
    'http://provider.example/t',
    '--callback',
    'http://localhost:9/cb',
    '--open',
  ]

  it('opens the start URL in the browser and says so on stderr', async () => {
    const { code, stdout, stderr } = await runCli(args, { env: { ...env(), ...noDesktop, BROWSER: browser } })
    expect(code, stderr).toBe(0)
    const url = stdout.match(/start URL\s+(\S+)/)![1]!
    expect(stderr).toContain(`Opening ${url} in your browser`)
    await waitFor(
      async () => existsSync(opened) && readFileSync(opened, 'utf8').includes(url),
      5_000,
      'the browser to get the URL',
    )
  })

  it('says to open the URL by hand when no browser starts', async () => {
    const { code, stdout, stderr } = await runCli(args, { env: { ...env(), ...noDesktop, BROWSER: '/bin/false' } })
    expect(code, stderr).toBe(0)
    expect(stdout).toMatch(/start URL\s+http/)
    expect(stderr).toMatch(/No browser could be opened \(the opener exited \d+\); open the URL yourself\./)
  })
})

describe('broker store --capture', () => {
  it('runs a 3-legged flow in a browser and prints the delivered token', async () => {
    const run = spawnCli(
      oauth2Store('cap', '--client-secret', 'cap-secret', '--scope', 'openid', '--capture', '--json'),
      { env: env() },
    )
    const [startUrl] = await run.waitFor(/http:\/\/\S+\/start\?hash=\S+/)
    const page = await new Browser().go(startUrl!)
    expect(page.body).toContain('The result is in your terminal')
    // The token never travels in a URL: the capture listener got a one-time code and redeemed it.
    expect(page.hops.at(-1)!.url).toMatch(/\/callback\/[\w-]{22}\?result=[^&]+/)
    expect(page.hops.some((h) => /access_token/.test(h.url))).toBe(false)
    const { code, stdout, stderr } = await run.exited
    expect(code, stderr).toBe(0)
    const out = JSON.parse(stdout)
    expect(out.captured.delivery).toBe('code')
    expect(out.captured.result.access_token).toMatch(/^ey/)
    expect(out.callback).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\/[\w-]{22}$/)
    // The state the capture made for the flow is not shown as if the flow had given it.
    expect(out.captured.result.state).toBeUndefined()
    expect(provider.tokenRequests.at(-1)).toMatchObject({ grant_type: 'authorization_code', client_id: 'cap' })
  })

  it('takes only the delivery of its own flow: another local process cannot hand it a token', async () => {
    const run = spawnCli(
      ['store', '--flow', 'oauth2-3', '--client-id', 'cap', '--client-secret', 'cap-secret'].concat([
        '--authorize-url',
        provider.authorizeUrl,
        '--access-url',
        provider.tokenUrl,
        '--capture',
        '--json',
      ]),
      { env: env() },
    )
    const [startUrl] = await run.waitFor(/http:\/\/\S+\/start\?hash=\S+/)
    const [, callback] = await run.waitFor(/for the result at (http:\/\/127\.0\.0\.1:\d+\/\S+) /)
    const port = new URL(callback!).port
    const planted = (url: string) => fetch(url).then((r) => r.status)
    // The well-known path, the right path without the flow's state, and with a made-up one: all refused.
    expect(await planted(`http://127.0.0.1:${port}/callback?access_token=planted`)).toBe(404)
    expect(await planted(`${callback}?access_token=planted`)).toBe(404)
    expect(await planted(`${callback}?access_token=planted&state=guess`)).toBe(404)
    const page = await new Browser().go(startUrl!)
    expect(page.body).toContain('The result is in your terminal')
    const { code, stdout, stderr } = await run.exited
    expect(code, stderr).toBe(0)
    expect(JSON.parse(stdout).captured.result.access_token).toMatch(/^ey/)
  })

  it('runs a flow without a user step by itself and prints the token table', async () => {
    const { code, stdout, stderr } = await runCli(oauth2Client('cc', 'cs', provider.tokenUrl, '--capture'), {
      env: env(),
    })
    expect(code, stderr).toBe(0)
    expect(stdout).toMatch(/Result \(delivered by code\):/)
    expect(stdout).toMatch(/access_token\s+ey/)
    expect(provider.tokenRequests.at(-1)).toMatchObject({ grant_type: 'client_credentials' })
  })

  it('exits 1 with the provider error the flow delivered to the listener', async () => {
    const port = await freePort()
    const { code, stdout, stderr } = await runCli(
      oauth2Client('cc', 'cs', `http://127.0.0.1:${port}/token`, '--capture'),
      { env: env() },
    )
    expect(code).toBe(1)
    expect(stdout).toBe('')
    expect(stderr).toMatch(/^Error FAILED: The flow failed: \w+: .+/m)
  })

  it('submits the form of a form_post delivery itself when the flow has no user step', async () => {
    const { code, stdout, stderr } = await runCli(
      oauth2Client('fp', 'fs', provider.tokenUrl, '--capture', '--delivery', 'form_post', '--json'),
      { env: env() },
    )
    expect(code, stderr).toBe(0)
    const out = JSON.parse(stdout)
    expect(out.captured.delivery).toBe('form_post')
    expect(out.captured.result.access_token).toMatch(/^ey/)
  })

  it('refuses --capture for oauth1-1, which signs requests and delivers nothing', async () => {
    const { code, stdout, stderr } = await runCli(
      ['store', '--flow', 'oauth1-1', '--consumer-key', 'ck', '--consumer-secret', 'cs', '--capture'],
      { env: env() },
    )
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toMatch(/^Error USAGE: oauth1-1 signs requests on demand .*POST \/sign/)
  })

  it('sends --api-key (BROKER_API_KEY) to a broker with api.keys, for /store and /result', async () => {
    const key = 'cli-api-key-0123456789'
    const locked = await startBroker({ args: ['--store', 'memory'], env: { BROKER_API_KEYS: key } })
    try {
      const args = oauth2Client('ak', 'as', provider.tokenUrl, '--capture')
      const refused = await runCli(args, { env: { BROKER_URL: locked.url } })
      expect(refused.code).toBe(1)
      expect(refused.stderr).toMatch(
        /^Error UNAUTHORIZED: .* Pass one of its api\.keys with --api-key \(or BROKER_API_KEY\)\./,
      )
      const { code, stdout, stderr } = await runCli(args, { env: { BROKER_URL: locked.url, BROKER_API_KEY: key } })
      expect(code, stderr).toBe(0)
      expect(stdout).toMatch(/access_token\s+ey/)
    } finally {
      await locked.stop()
    }
  })

  it('says so clearly when the flow does not finish within the record lifetime', async () => {
    const short = await startBroker({ args: ['--store', 'memory', '--expire', '2'] })
    try {
      const { code, stderr } = await runCli(oauth2Store('c', '--capture'), { env: { BROKER_URL: short.url } })
      expect(code).toBe(1)
      expect(stderr).toMatch(
        /Error CAPTURE_TIMEOUT: Nobody opened the start URL within 2 s, the stored record.s lifetime \(store\.expire\)/,
      )
      expect(stderr).toMatch(/→ Open the start URL sooner/)
    } finally {
      await short.stop()
    }
  })

  // Issue 34: it gave up at store.expire although the user had opened the start URL, and the login then
  // came back to a listener that was gone.
  it('keeps waiting past store.expire once the start URL is opened, while the flow lives (store.callbackWait)', async () => {
    const short = await startBroker({ args: ['--store', 'memory', '--expire', '2', '--callback-wait', '60'] })
    try {
      const run = spawnCli(oauth2Store('slow-login', '--capture', '--json'), { env: { BROKER_URL: short.url } })
      const [startUrl] = await run.waitFor(/http:\/\/\S+\/start\?hash=\S+/)
      // The user opens the start URL and reaches the provider's login …
      const browser = new Browser()
      const start = await fetch(startUrl!, { redirect: 'manual' })
      for (const set of start.headers.getSetCookie()) await browser.jar.setCookie(set, startUrl!)
      const login = start.headers.get('location')!
      expect(login).toContain(provider.authorizeUrl)
      // … and comes back after store.expire has passed: the capture noticed (its first look is at
      // store.expire and a grace second) and waits on.
      await run.waitFor(/The start URL was opened: waiting up to \d+ s for the login/)
      await new Promise((r) => setTimeout(r, 1000))
      const page = await browser.go(login)
      expect(page.body).toContain('The result is in your terminal')
      const { code, stdout, stderr } = await run.exited
      expect(code, stderr).toBe(0)
      expect(JSON.parse(stdout).captured.result.access_token).toMatch(/^ey/)
    } finally {
      await short.stop()
    }
  })
})
