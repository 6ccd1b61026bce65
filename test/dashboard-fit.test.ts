/* eslint-disable no-control-regex -- the terminal's escape sequences are what these tests read */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from './helpers/broker.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { freePort, waitFor } from './helpers/ports.js'
import { runInTerminal, type Terminal } from './helpers/tmux.js'

// Every behaviour at the smallest terminal docs/dashboard.md promises a full drawing in, and at a large one.
const SIZES = [
  { columns: 80, rows: 24 },
  { columns: 160, rows: 45 },
]
// As in most CI services; no display, so no browser can be opened.
const ENV = { CI: 'true', DISPLAY: '', WAYLAND_DISPLAY: '', BROWSER: '' }
const SECRET = 'fit-client-s3cret-value'
// A dashboard takes a few seconds to start; far more on a loaded machine.
const TIMEOUT = 120_000
// A colour SGR: a foreground or background (30–38, 40–48, 90–97, 100–107); 39 and 49 only reset to the default.
const COLOUR = /\x1b\[(?:[0-9;]*;)?(?:3[0-8]|4[0-8]|9[0-7]|10[0-7])(?:;[0-9;]*)?m/

let provider: OAuth2Provider
let term: Terminal | undefined
let dir: string

beforeAll(async () => {
  provider = await startOAuth2Provider()
  dir = mkdtempSync(join(tmpdir(), 'broker-fit-'))
})
afterEach(() => {
  term?.stop()
  term = undefined
})
afterAll(async () => {
  await provider?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Presses keys one at a time, as a person would (keys sent in one chunk read as a paste). */
async function press(t: Terminal, ...keys: string[]) {
  for (const key of keys) {
    t.send(key)
    await sleep(150)
  }
}

async function store(base: string, record: Record<string, string>): Promise<{ hash: string; url: string }> {
  const post = () =>
    fetch(`${base}/store`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(record),
    })
  // A kept-alive socket the broker closed just as it was reused fails before anything was stored: once more.
  const res = await post().catch(post)
  expect(res.status).toBe(200)
  return (await res.json()) as { hash: string; url: string }
}

const threeLegged = {
  auth_version: '2',
  auth_leg: '3',
  client_id: 'fit-client',
  authorize_url: 'https://a-rather-long-identity-provider-host.example.com/oauth2/authorize',
  access_url: 'https://a-rather-long-identity-provider-host.example.com/oauth2/token',
  callback: 'http://localhost:9/cb',
}

async function dashboard(size: { columns: number; rows: number }, env: Record<string, string> = {}) {
  const port = await freePort()
  term = runInTerminal(['dashboard', '--port', String(port), '--store', 'memory'], { ...ENV, ...env }, size)
  await term.waitFor(/No flows yet/, 60_000)
  return { t: term, base: `http://127.0.0.1:${port}` }
}

/** Lines as drawn: -J joins what the terminal wrapped, so a wrapped row reads as one line wider than the pane. */
function expectFits(screen: string, columns: number) {
  for (const line of screen.split('\n')) expect(line.length, line).toBeLessThanOrEqual(columns)
}

describe.each(SIZES)('broker dashboard at $columns×$rows (tmux)', (size) => {
  it(
    'fits: one line per flow, no blank lines between them, how to quit always shown; the selection follows its flow; the record counts down',
    async () => {
      const { t, base } = await dashboard(size)
      const flows = []
      for (let i = 0; i < 3; i++) flows.push(await store(base, threeLegged))
      const row = /^[› ] (\S{8})\s+oauth_2_3-legged\s+a-\S+\s+stored\s+\d+s\s*$/
      const screen = await t.waitFor(new RegExp(`${flows[0]!.hash.slice(0, 8)}[^\\n]+stored\\s+\\d+s`))
      await t.waitFor(/3 flows, newest first/)
      const lines = t.screen().split('\n')
      const rows = lines.flatMap((line, i) => (line.match(row) ? [i] : []))
      expect(rows, screen).toHaveLength(3)
      expect(rows[2]! - rows[0]!, 'rows are consecutive lines').toBe(2)
      expectFits(t.screen(), size.columns)
      // Newest first; the selection stayed on the first flow listed (the oldest) as the others arrived.
      expect(t.screen()).toMatch(new RegExp(`^› ${flows[0]!.hash.slice(0, 8)}`, 'm'))

      // Every panel keeps the quit key on screen and fits.
      // Each key once the last one is seen drawn: keys sent faster than a loaded machine reads them arrive as one chunk.
      const panels: Array<[string, RegExp]> = [
        ['2', /preset\s+‹/],
        ['3', /Flows \(3\)/],
        ['4', /Fixtures in/],
        ['1', /3 flows, newest first/],
      ]
      for (const [n, drawn] of panels) {
        t.send(n)
        await t.waitFor(drawn)
        expect(t.screen()).toMatch(/q quit/)
        expectFits(t.screen(), size.columns)
      }

      // Select the middle flow; a new flow arriving on top does not move the selection off it.
      t.send('Up')
      const middle = flows[1]!.hash.slice(0, 8)
      await t.waitFor(new RegExp(`^› ${middle}`, 'm'))
      const newest = await store(base, threeLegged)
      await t.waitFor(/4 flows, newest first/)
      expect(t.screen()).toMatch(new RegExp(`^  ${newest.hash.slice(0, 8)}`, 'm'))
      expect(t.screen()).toMatch(new RegExp(`^› ${middle}`, 'm'))

      // Enter opens that flow, and its countdown goes on.
      t.send('Enter')
      const header = new RegExp(`${middle}… · oauth_2_3-legged · stored · (\\d+)s left`)
      const before = Number(header.exec(await t.waitFor(header))![1])
      // Whole seconds: the next one shows within about a second; waited for, not slept through.
      const after = await waitFor(
        async () => {
          const left = Number(header.exec(t.screen())?.[1])
          return left < before ? left : undefined
        },
        5000,
        'the countdown to go down',
      )
      expect(after).toBeLessThan(before)
      expectFits(t.screen(), size.columns)

      // A key that does nothing says so.
      t.send('Escape')
      await t.waitFor(/4 flows, newest first/)
      t.send('x')
      await t.waitFor(/"x" does nothing here/)

      // Colours are on (NO_COLOR unset): the progress is tinted.
      expect(t.styledScreen()).toMatch(COLOUR)
      t.send('q')
      expect(await t.exitCode()).toBe(0)
    },
    TIMEOUT,
  )

  it(
    'words an expired flow one way in the Flows and the Walk panels: the progress reached, then expired',
    async () => {
      const { t, base } = await dashboard(size, { BROKER_STORE_EXPIRE: '2' })
      const { hash } = await store(base, threeLegged)
      const short = hash.slice(0, 8)
      await t.waitFor(new RegExp(`${short}\\s+oauth_2_3-legged\\s+\\S+\\s+stored\\s+expired`))
      await press(t, '3')
      await t.waitFor(new RegExp(`${short}\\s+oauth_2_3-legged\\s+stored\\s+expired`))
      expect(t.screen()).not.toMatch(/expired\s+expired/)
      t.send('q')
      expect(await t.exitCode()).toBe(0)
    },
    TIMEOUT,
  )

  it(
    'New flow: client_secret asked and masked, gone once stored; o without a browser says so; the walk shows the token answer',
    async () => {
      const { t, base } = await dashboard(size)
      await press(t, '2')
      await t.waitFor(/preset\s+‹ oauth2-3 ›/)
      await t.waitFor(/client_secret \(optional\)/)
      await press(t, 'Down')
      await t.waitFor(/› client_id/)
      t.type('form-client')
      await press(t, 'Enter')
      await t.waitFor(/› client_secret/)
      t.type(SECRET)
      await t.waitFor(new RegExp(`\\*{${SECRET.length}}`))
      expect(t.screen()).not.toContain(SECRET)
      // The issuer stays empty: the endpoints are typed in.
      await press(t, 'Enter')
      await t.waitFor(/› issuer \(optional\)/)
      await press(t, 'Enter')
      t.type(provider.authorizeUrl)
      await press(t, 'Enter')
      t.type(provider.tokenUrl)
      // callback, scope, client_auth (the broker's default), Store, and Enter on it.
      await press(t, 'Enter', 'Enter', 'Enter', 'Enter')
      await t.waitFor(/› {2}Store/)
      await press(t, 'Enter')
      const screen = await t.waitFor(/Stored \(oauth2-3\)/)
      expect(screen).not.toContain(SECRET)
      expect(screen).not.toMatch(/\*{4}/)
      const hash = /hash\s+(\S{32})/.exec(screen)![1]!
      const check = (await (await fetch(`${base}/hash-check?hash=${hash}`)).json()) as { record: object }
      expect(check.record).toMatchObject({ client_id: 'form-client', client_secret: '[redacted]' })
      expectFits(t.screen(), size.columns)

      await press(t, 'o')
      await t.waitFor(/No browser here \(no DISPLAY\): open the URL yourself\./)
      expect(t.screen()).toMatch(new RegExp(`^  http://localhost:\\d+/start\\?hash=${hash}$`, 'm'))

      // A 2-legged flow's start URL answers its tokens as JSON: the walk shows them as the result.
      const two = await store(base, {
        auth_version: '2',
        auth_leg: '2',
        client_id: 'fit-client',
        client_secret: SECRET,
        access_url: provider.tokenUrl,
      })
      await press(t, '3')
      await t.waitFor(new RegExp(`${two.hash.slice(0, 8)}\\s+oauth_2_2-legged`))
      t.send('Up')
      await t.waitFor(new RegExp(`› ${two.hash.slice(0, 8)}`))
      t.send('Enter')
      await t.waitFor(new RegExp(`Walking http://localhost:\\d+/start\\?hash=${two.hash.slice(0, 4)}`))
      t.send('Enter')
      await t.waitFor(/Ended: the final answer: 200 OK/)
      expect(t.screen()).toMatch(/answer 200 OK \(application\/json\)/)
      expect(t.screen()).toMatch(/\|\s+"access_token": "eyJ\w…[\w-]{4}"/)
      expect(t.screen()).not.toContain('is not a redirect')
      expectFits(t.screen(), size.columns)
      t.send('q')
      expect(await t.exitCode()).toBe(0)
    },
    TIMEOUT,
  )

  it(
    'honours NO_COLOR: no colour at all, the selection still shown',
    async () => {
      const { t, base } = await dashboard(size, { NO_COLOR: '1' })
      const { hash } = await store(base, threeLegged)
      await t.waitFor(new RegExp(`› ${hash.slice(0, 8)}\\s+oauth_2_3-legged`))
      expect(t.styledScreen()).not.toMatch(COLOUR)
      // Attributes are not colours: the selected row is still inverted.
      expect(t.styledScreen()).toMatch(/\x1b\[[0-9;]*7[0-9;]*m/)
      t.send('q')
      expect(await t.exitCode()).toBe(0)
    },
    TIMEOUT,
  )

  it(
    'colours PASS/FAIL of pdk run on a terminal, and not under NO_COLOR',
    async () => {
      const fixture = JSON.parse(readFileSync(join(ROOT, 'fixtures/pdk/js-hello.json'), 'utf8'))
      fixture.plugins[0].module = join(ROOT, 'fixtures/pdk', fixture.plugins[0].module)
      fixture.expect.status = 418
      delete fixture.$schema
      const file = join(dir, `failing-${size.columns}.json`)
      writeFileSync(file, JSON.stringify(fixture))

      term = runInTerminal(['pdk', 'run', file, join(ROOT, 'fixtures/pdk/js-hello.json')], {}, size)
      expect(await term.exitCode(30_000)).toBe(1)
      expect(term.styledScreen()).toMatch(/\x1b\[31mFAIL\x1b\[39m kong-js-pdk hello/)
      expect(term.styledScreen()).toMatch(/\x1b\[32mPASS\x1b\[39m kong-js-pdk hello/)
      expect(term.styledScreen()).toMatch(/\x1b\[31m {2}✗ \$\.expect\.status/)
      term.stop()

      term = runInTerminal(['pdk', 'run', file], { NO_COLOR: '1' }, size)
      expect(await term.exitCode(30_000)).toBe(1)
      expect(term.screen()).toMatch(/^FAIL kong-js-pdk hello/m)
      expect(term.styledScreen()).not.toMatch(COLOUR)
    },
    TIMEOUT,
  )
})
