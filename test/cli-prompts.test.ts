import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { freePort } from './helpers/ports.js'
import { runInTerminal, type Terminal } from './helpers/tmux.js'

let broker: BrokerProcess
let provider: OAuth2Provider
let term: Terminal | undefined
const terms: Terminal[] = []
/** A terminal stopped after all tests. */
const terminal = (...args: Parameters<typeof runInTerminal>) => {
  const t = runInTerminal(...args)
  terms.push(t)
  return t
}

beforeAll(async () => {
  ;[broker, provider] = await Promise.all([startBroker({ args: ['--store', 'memory'] }), startOAuth2Provider()])
})
afterAll(async () => {
  term?.stop()
  for (const t of terms) t.stop()
  await Promise.all([broker?.stop(), provider?.stop()])
})

describe('prompts in a real terminal (tmux)', () => {
  it('asks for every missing field, masks the secret and validates URLs', async () => {
    const secret = 'typed-s3cret'
    term = runInTerminal(['store', '--flow', 'oauth2-2', '--capture'], { BROKER_URL: broker.url })
    await term.waitFor(/client_id — OAuth 2 client id\./)
    term.type('tty-client')
    term.send('Enter')
    await term.waitFor(/client_secret — /)
    term.type(secret)
    await term.waitFor(/\*{12}/)
    expect(term.screen()).not.toContain(secret)
    term.send('Enter')
    await term.waitFor(/access_url — /)
    term.type('not a url')
    term.send('Enter')
    await term.waitFor(/Enter an absolute http\(s\) URL/)
    term.send(...Array(9).fill('BSpace'))
    term.type(provider.tokenUrl)
    term.send('Enter')
    expect(await term.exitCode()).toBe(0)
    const screen = term.screen()
    expect(screen).toMatch(/Result \(delivered by code\):/)
    expect(screen).toMatch(/access_token\s+ey/)
    expect(screen).not.toContain(secret)
    expect(provider.tokenRequests.at(-1)).toMatchObject({
      client_id: 'tty-client',
      client_secret: secret,
      grant_type: 'client_credentials',
    })
  })

  // A confidential client (client_auth names a secret method) is asked for its secret; a public one
  // (PKCE only, client_auth none, a device) never. XDG_CONFIG_HOME: no secrets file of the user's.
  const noKeptSecrets = () => ({ BROKER_URL: broker.url, XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'broker-xdg-')) })
  const codeFlow = (...more: string[]) => [
    ...['store', '--flow', 'oauth2-3', '--client-id', 'web-app'],
    ...['--authorize-url', 'https://provider.example/authorize', '--access-url', provider.tokenUrl],
    ...['--callback', 'http://localhost:8080/done', ...more],
  ]

  it("asks for a confidential client's secret, masked, when nothing gave it", async () => {
    const secret = 'conf1dential'
    const t = terminal(codeFlow('--client-auth', 'basic'), noKeptSecrets())
    await t.waitFor(/client_secret — OAuth 2 client secret/)
    t.type(secret)
    await t.waitFor(/\*{12}/)
    expect(t.screen()).not.toContain(secret)
    t.send('Enter')
    expect(await t.exitCode()).toBe(0)
    const hash = /hash=([\w-]{20,})/.exec(t.screen())?.[1]
    expect(hash, t.screen()).toBeDefined()
    const check = (await (await fetch(`${broker.url}/hash-check?hash=${hash}`)).json()) as {
      record: Record<string, unknown>
    }
    // Stored (never shown back): the broker redacts what it holds.
    expect(check.record.client_secret).toBe('[redacted]')
    expect(t.screen()).not.toContain(secret)
  })

  it('asks for the secret of a catalogue provider whose clients have one (GitHub); --client-auth none asks nothing', async () => {
    const github = ['store', '--flow', 'github', '--client-id', 'gh-app', '--callback', 'http://localhost:8080/done']
    const t = terminal(github, noKeptSecrets())
    await t.waitFor(/client_secret — OAuth 2 client secret/)
    t.send('C-c')
    expect(await t.exitCode()).toBe(1)
    const json = terminal([...github, '--json'], noKeptSecrets())
    expect(await json.exitCode()).toBe(2)
    expect(json.screen()).toContain('client_secret (--client-secret)')
  })

  it('never asks a public client (PKCE only) for a secret', async () => {
    const t = terminal(codeFlow(), noKeptSecrets())
    expect(await t.exitCode()).toBe(0)
    expect(t.screen()).not.toMatch(/client_secret/)
    expect(t.screen()).toMatch(/hash=/)
  })

  it('under --json on a terminal asks nothing: exit 2 naming --client-secret', async () => {
    const t = terminal(codeFlow('--client-auth', 'basic', '--json'), noKeptSecrets())
    expect(await t.exitCode()).toBe(2)
    expect(t.screen()).toContain('"code": "MISSING_FIELDS"')
    expect(t.screen()).toContain('client_secret (--client-secret)')
    expect(t.screen()).not.toMatch(/client_secret — /)
  })

  it('test-provider under --json on a terminal asks nothing: exit 2 naming -k, -s and -h', async () => {
    const t = terminal(['test-provider', 'github', '--json'], { BROKER_URL: broker.url })
    expect(await t.exitCode()).toBe(2)
    expect(t.screen()).toContain('"code": "MISSING_FIELDS"')
    expect(t.screen()).toContain('-k/--key')
    expect(t.screen()).not.toMatch(/key — Client id/)
  })

  it('stops at Ctrl-C in a prompt with one line, exit 1, nothing stored', async () => {
    const t = terminal(['store', '--flow', 'oauth2-2'], { BROKER_URL: broker.url })
    await t.waitFor(/client_id — /)
    t.send('C-c')
    expect(await t.exitCode()).toBe(1)
    const screen = t.screen()
    expect(screen).toContain('Error CANCELLED: Cancelled at the client_id prompt; nothing was stored.')
    expect(screen).not.toMatch(/ExitPromptError|at .*\.js:\d+/)
  })

  it('test-provider asks for -k, -s and -h with what each is, masks the secret and checks the host', async () => {
    const port = await freePort()
    const t = terminal(['test-provider', 'github', '--port', String(port)], { BROKER_URL: broker.url })
    await t.waitFor(/key — Client id or consumer key/)
    t.type('tp-key')
    t.send('Enter')
    await t.waitFor(/secret — Client or consumer secret/)
    t.type('tp-secret')
    t.send('Enter')
    await t.waitFor(/host — Host the browser reaches this machine at/)
    expect(t.screen()).not.toContain('tp-secret')
    t.type('http://localhost')
    t.send('Enter')
    await t.waitFor(/Enter a host name or IP address .* \(got "http:\/\/localhost"\)/)
    t.send(...Array(16).fill('BSpace'))
    t.type('localhost')
    t.send('Enter')
    await t.waitFor(new RegExp(`then visit http://localhost:${port}/ \\(Ctrl-C to stop\\)`))
    expect((await fetch(`http://localhost:${port}/nothing`)).status).toBe(404)
  })
})
