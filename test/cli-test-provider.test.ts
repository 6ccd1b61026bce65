import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BrokerProcess, ROOT, runCli, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { spawnCli } from './helpers/cli.js'
import { type OAuth1Provider, startOAuth1Provider } from './helpers/oauth1-provider.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { freePort } from './helpers/ports.js'

let broker: BrokerProcess
let oauth2: OAuth2Provider
let oauth1: OAuth1Provider
const userinfoAuth: string[] = []
const dir = mkdtempSync(join(tmpdir(), 'broker-presets-'))

beforeAll(async () => {
  ;[broker, oauth2, oauth1] = await Promise.all([
    startBroker({ args: ['--store', 'memory'] }),
    startOAuth2Provider(),
    startOAuth1Provider(),
  ])
  oauth2.server.service.on('beforeUserinfo', (_res: unknown, req: { headers: Record<string, string> }) =>
    userinfoAuth.push(req.headers.authorization ?? ''),
  )
})
afterAll(async () => {
  await Promise.all([broker?.stop(), oauth2?.stop(), oauth1?.stop()])
})

function presetFile(name: string, preset: unknown): string {
  const file = join(dir, `${name}.json`)
  writeFileSync(file, JSON.stringify(preset))
  return file
}

/** Runs test-provider --once, drives its app URL through a cookie-keeping browser, returns both ends. */
/** `broker test-provider <name>` for the client k/s on localhost:`port`, talking to `brokerUrl`; `more` adds flags. */
const onLocalhost = (name: string, port: number, brokerUrl: string, ...more: string[]) => [
  'test-provider',
  name,
  ...['-k', 'k', '-s', 's', '-h', 'localhost', '--port', String(port), '--broker', brokerUrl],
  ...more,
]

async function roundTrip(file: string, key: string, secret: string) {
  const port = await freePort()
  const run = spawnCli([
    'test-provider',
    '--preset-file',
    file,
    '-k',
    key,
    '-s',
    secret,
    '-h',
    'localhost',
    '--port',
    String(port),
    '--broker',
    broker.url,
    '--once',
  ])
  const [appUrl] = await run.waitFor(/http:\/\/localhost:\d+\/(?=\s|$)/m)
  expect(appUrl).toBe(`http://localhost:${port}/`)
  const page = await new Browser().go(appUrl!)
  return { page, ...(await run.exited) }
}

describe('broker test-provider', () => {
  it('runs an OAuth 2 preset through the broker and prints the API request headers and answer', async () => {
    const file = presetFile('local2', {
      title: 'Local OAuth 2',
      flow: 'oauth2-3',
      record: { authorize_url: oauth2.authorizeUrl, access_url: oauth2.tokenUrl },
      scopes: ['openid', 'profile'],
      scope_separator: ' ',
      api: { url: `${oauth2.issuer}/userinfo`, send_token: 'header', scheme: 'Bearer' },
    })
    const { page, code, stdout, stderr } = await roundTrip(file, 'tp-client', 'tp-secret')
    expect(code, stderr).toBe(0)
    expect(page.status).toBe(200)
    expect(page.body).toContain('Local OAuth 2 answered 200')
    // app → broker /start → provider → broker /callback → app /callback
    expect(page.hops.map((h) => h.status)).toEqual([302, 302, 302, 302, 200])
    expect(oauth2.authorizeRequests.at(-1)).toMatchObject({
      client_id: 'tp-client',
      scope: 'openid profile',
      code_challenge_method: 'S256',
    })
    const sent = userinfoAuth.at(-1)!
    expect(sent).toMatch(/^Bearer ey/)
    expect(stdout).toMatch(/→ GET http:\/\/\S+\/userinfo/)
    expect(stdout).toMatch(/authorization: Bearer ey\w\w…\S{4}/)
    expect(stdout).not.toContain(sent.slice(7))
    expect(stdout).toMatch(/← 200/)
    expect(stdout).toMatch(/"sub": "/)
  })

  it('runs an OAuth 1.0a preset and signs the API call with the access token', async () => {
    oauth1.addConsumer({ key: 'tp-ck', secret: 'tp-cs' })
    const file = presetFile('local1', {
      title: 'Local OAuth 1',
      flow: 'oauth1-3',
      record: { request_url: oauth1.requestUrl, authorize_url: oauth1.authorizeUrl, access_url: oauth1.accessUrl },
      api: { url: oauth1.verifyUrl, send_token: 'oauth1' },
    })
    const { code, stdout, stderr } = await roundTrip(file, 'tp-ck', 'tp-cs')
    expect(code, stderr).toBe(0)
    const resource = oauth1.log.filter((l) => l.path === '/account/verify_credentials.json').at(-1)!
    expect(resource.ok).toBe(true)
    expect(stdout).toMatch(/authorization: OAuth .*oauth_token="at-\w…\w{4}"/)
    expect(stdout).not.toContain(`oauth_token="${[...oauth1.accessTokens.keys()].at(-1)}"`)
    expect(stdout).toMatch(/"screen_name": "alice"/)
  })

  it('exits 1 and says why when the flow fails', async () => {
    const file = presetFile('bad', {
      title: 'Refusing',
      flow: 'oauth1-3',
      record: { request_url: oauth1.requestUrl, authorize_url: oauth1.authorizeUrl, access_url: oauth1.accessUrl },
      api: { url: oauth1.verifyUrl, send_token: 'oauth1' },
    })
    const { code, stdout, stderr, page } = await roundTrip(file, 'nobody', 'x')
    expect(code).toBe(1)
    expect(page.body).toContain('The flow failed')
    expect(stderr).toMatch(/Error FAILED: The flow failed: \w+/)
    // Said once, by the error banner: not "The flow failed: The flow failed: …", nor a notice before it.
    expect(stderr.match(/The flow failed/g)).toHaveLength(1)
    expect(stdout).toBe('')
  })

  it('lists the known providers for an unknown one, and exits 2 listing -k/-s/-h without a terminal', async () => {
    const unknown = await runCli(['test-provider', 'myspace', '-k', 'a', '-s', 'b', '-h', 'localhost'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain(
      'Unknown provider "myspace". Known providers: facebook, github, gitlab, google, microsoft, notion, quickbooks, salesforce, slack, x, x2.',
    )
    const typo = await runCli(['test-provider', 'gthub', '-k', 'a', '-s', 'b', '-h', 'localhost'])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain('Unknown provider "gthub". Did you mean "github"? Known providers:')
    // --help names every preset, the same list in the description and in the argument's help.
    const shipped = readdirSync(join(ROOT, 'fixtures', 'providers'))
      .map((f) => f.replace(/\.json$/, ''))
      .sort()
    const help = await runCli(['test-provider', '--help'])
    const lists = [...help.stdout.replace(/\s+/g, ' ').matchAll(/\(((?:[a-z0-9]+, )+[a-z0-9]+)\)/g)].map((m) => m[1])
    expect(lists).toEqual([shipped.join(', '), shipped.join(', ')])
    const missing = await runCli(['test-provider', 'github'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('key (-k/--key), secret (-s/--secret), host (-h/--host)')
  })

  it('says at once, in one line naming the URL, that no broker answers (before anyone visits the app)', async () => {
    const [port, dead] = await Promise.all([freePort(), freePort()])
    const { code, stdout, stderr } = await runCli(onLocalhost('github', port, `http://127.0.0.1:${dead}`, '--json'), {
      timeoutMs: 10_000,
    })
    expect(code).toBe(1)
    expect(JSON.parse(stdout).error).toMatchObject({
      code: 'BROKER_UNREACHABLE',
      message: `No broker answers at http://127.0.0.1:${dead} (ECONNREFUSED).`,
    })
    expect(stderr).toBe('')
  })

  it('refuses a host that is not a bare host name or IP (exit 2)', async () => {
    for (const host of ['http://localhost', 'localhost:3000', 'my host', 'localhost/app']) {
      const { code, stderr } = await runCli(
        ['test-provider', 'github', '-k', 'k', '-s', 's', '-h', host, '--broker', broker.url],
        { timeoutMs: 10_000 },
      )
      expect(code, host).toBe(2)
      expect(stderr, host).toContain(
        `Error USAGE: -h/--host: Enter a host name or IP address such as localhost or 192.168.1.20, without scheme, port or path (got "${host}")`,
      )
    }
  })

  it('ships a valid preset for every named provider (each gets as far as the busy port)', async () => {
    const busy = createServer().listen(0, '127.0.0.1')
    await once(busy, 'listening')
    const port = (busy.address() as AddressInfo).port
    try {
      const names = [
        'github',
        'google',
        'facebook',
        'gitlab',
        'microsoft',
        'notion',
        'quickbooks',
        'salesforce',
        'slack',
        'x',
        'x2',
      ]
      for (const name of names) {
        const { code, stderr } = await runCli(onLocalhost(name, port, broker.url), { timeoutMs: 10_000 })
        expect(stderr, name).toContain(`Port ${port} is in use`)
        expect(code, name).toBe(2)
      }
    } finally {
      busy.close()
    }
  }, 120_000)
})
