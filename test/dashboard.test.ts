import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, runCli, startBroker } from './helpers/broker.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { freePort, waitFor } from './helpers/ports.js'
import { runInTerminal, type Terminal } from './helpers/tmux.js'

const SIZE = { columns: 120, rows: 40 }
// CI=true as in most CI services: Ink would then draw nothing until exit, and the dashboard must still draw.
const CI_ENV = { CI: 'true' }
const ADMIN_KEY = 'e2e-admin-key-0123456789'
const SECRET = 'e2e-client-s3cret-value'

let provider: OAuth2Provider
let app: CallbackApp
let term: Terminal | undefined
let broker: BrokerProcess | undefined

beforeAll(async () => {
  ;[provider, app] = await Promise.all([startOAuth2Provider(), startCallbackApp()])
})
afterEach(async () => {
  term?.stop()
  term = undefined
  await broker?.stop()
  broker = undefined
})
afterAll(async () => {
  await Promise.all([provider?.stop(), app?.close()])
})

/** Stores a 3-legged OAuth 2 flow over HTTP, as any app would. */
async function storeFlow(base: string): Promise<{ hash: string; url: string }> {
  const res = await fetch(`${base}/store`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth_version: '2',
      auth_leg: '3',
      client_id: 'dash-client',
      client_secret: SECRET,
      authorize_url: provider.authorizeUrl,
      access_url: provider.tokenUrl,
      scope: 'openid',
      callback: app.callback,
    }),
  })
  expect(res.status).toBe(200)
  return (await res.json()) as { hash: string; url: string }
}

const secondsOf = (screen: string, short: string) =>
  Number(new RegExp(`${short}\\s+oauth_2_3-legged\\s+\\S+\\s+stored\\s+(\\d+)s`).exec(screen)?.[1])
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Presses keys one at a time, as a person would (keys sent in one chunk read as a paste). */
async function press(t: Terminal, ...keys: string[]) {
  for (const key of keys) {
    t.send(key)
    await sleep(120)
  }
}

// Each test starts a dashboard or a broker, which takes far longer than usual on a loaded machine.
describe('broker dashboard in a real terminal (tmux)', { timeout: 120_000 }, () => {
  it('shows a stored flow live and counting down, walks it hop by hop, replays a PDK fixture, and q exits 0', async () => {
    const port = await freePort()
    term = runInTerminal(['dashboard', '--port', String(port), '--store', 'memory'], CI_ENV, SIZE)
    await term.waitFor(/No flows yet/)
    expect(term.screen()).toMatch(/1 Flows\s+2 New flow\s+3 Walk\s+4 PDK replay/)
    expect(term.screen()).toMatch(/Tab\/1-4 panel\s+q quit/)

    // A flow stored over HTTP appears without a key press, and its countdown goes down.
    const { hash } = await storeFlow(`http://127.0.0.1:${port}`)
    const short = hash.slice(0, 8)
    const first = await term.waitFor(new RegExp(`${short}\\s+oauth_2_3-legged\\s+localhost:\\d+\\s+stored\\s+\\d+s`))
    // Whole seconds: the next one shows within about a second; waited for, not slept through.
    const t = term
    const second = await waitFor(
      async () => (secondsOf(t.screen(), short) < secondsOf(first, short) ? t.screen() : undefined),
      5000,
      'the countdown to go down',
    )
    expect(second).not.toContain(hash)

    // Enter opens the record, its secret redacted.
    term.send('Enter')
    await term.waitFor(/client_id\s+dash-client/)
    expect(term.screen()).toMatch(/client_secret\s+\[redacted\]/)
    expect(term.screen()).not.toContain(SECRET)
    term.send('Escape')
    await term.waitFor(/1 flow, newest first/)

    // Walk: one hop per Enter.
    term.send('3')
    await term.waitFor(/Flows \(1\): Enter walks/)
    term.send('Enter')
    await term.waitFor(/— 0 hops/)
    term.send('Enter')
    await term.waitFor(/#1\s+GET http:\/\/localhost:\d+\/start\?hash=\S+\s+→ 302/)
    expect(term.screen()).not.toContain('#2')
    expect(term.screen()).toMatch(/next: http:\/\/localhost:\d+\/authorize\?client_id=dash-client/)
    term.send('Enter')
    await term.waitFor(/#2\s+GET http:\/\/localhost:\d+\/authorize/)
    expect(term.screen()).toMatch(/client_id\s+dash-client/)
    expect(term.screen()).toMatch(/code_challenge_method\s+S256/)
    expect(term.screen()).not.toContain('#3')
    term.send('Enter')
    await term.waitFor(/#3\s+GET http:\/\/localhost:\d+\/callback\?code=\S+…/)
    term.send('Enter')
    await term.waitFor(/Ended: the final answer: 200 OK/)
    // The app's answer ends the chain: shown with its body.
    expect(term.screen()).toMatch(/answer 200 OK \(text\/plain\)\n\s+\| app got it/)
    expect(app.received.at(-1)!.query.access_token).toMatch(/^ey/)
    // The flows panel followed the flow through its events.
    await press(term, 'Escape', '1')
    await term.waitFor(new RegExp(`${short}\\s+oauth_2_3-legged\\s+\\S+\\s+completed`))

    // PDK replay: phase by phase.
    term.send('4')
    await term.waitFor(/Fixtures in fixtures\/pdk \(\d+\)/)
    await press(term, 'Down', 'Down', 'Enter')
    const phases = Number(/Phase 1\/(\d+): rewrite · header-echo/.exec(await term.waitFor(/Phase 1\/\d+: rewrite/))![1])
    expect(phases).toBeGreaterThan(2)
    expect(term.screen()).not.toMatch(/Phase 2\//)
    term.send('Enter')
    await term.waitFor(new RegExp(`Phase 2/${phases}: access · header-echo`))
    expect(term.screen()).toMatch(/Response after this phase: \d{3}/)
    // One key at a time, each seen drawn: keys sent faster than a loaded machine reads them arrive as one chunk.
    for (let n = 3; n <= phases; n++) {
      term.send('Enter')
      await term.waitFor(new RegExp(`Phase ${n}/${phases}:`))
    }
    term.send('Enter')
    await term.waitFor(/PASS ESM plugin/)

    // Tab wraps to the flows panel; q leaves, the terminal restored and the broker stopped.
    await press(term, 'Escape', 'Tab')
    await term.waitFor(/1 flow, newest first/)
    term.send('q')
    expect(await term.exitCode()).toBe(0)
    expect(term.screen()).not.toContain('broker dashboard ·')
    await expect(fetch(`http://127.0.0.1:${port}/ping`)).rejects.toThrow()
  })

  it('stores a flow from the New flow panel and stops the broker on Ctrl-C', async () => {
    const port = await freePort()
    term = runInTerminal(['dashboard', '--port', String(port), '--store', 'memory'], CI_ENV, SIZE)
    await term.waitFor(/No flows yet/)
    term.send('2')
    await term.waitFor(/preset\s+‹ oauth2-3 ›/)
    await press(term, 'Right', 'Down')
    await term.waitFor(/› client_id/)
    term.type('form-client')
    term.send('Enter')
    term.type(SECRET)
    await term.waitFor(/\*{23}/)
    expect(term.screen()).not.toContain(SECRET)
    // The issuer stays empty: access_url is typed in.
    await press(term, 'Enter')
    await term.waitFor(/› issuer \(optional\)/)
    await press(term, 'Enter')
    term.type('nope')
    await term.waitFor(/Enter an absolute http\(s\) URL/)
    term.send(...Array(4).fill('BSpace'))
    term.type(provider.tokenUrl)
    // callback, client_auth (the broker's default), Store.
    await press(term, 'Enter', 'Down', 'Down', 'Enter')
    const screen = await term.waitFor(/Stored \(oauth2-2\)/)
    const hash = /hash\s+(\S{32})/.exec(screen)![1]!
    expect(screen).toMatch(new RegExp(`start URL\\s+http://localhost:${port}/start\\?hash=${hash}`))
    const check = await (await fetch(`http://127.0.0.1:${port}/hash-check?hash=${hash}`)).json()
    expect(check).toMatchObject({
      plugin: 'oauth_2_2-legged',
      record: { client_id: 'form-client', access_url: provider.tokenUrl },
    })
    await press(term, 'Tab', 'Tab', 'Tab')
    await term.waitFor(new RegExp(`${hash.slice(0, 8)}\\s+oauth_2_2-legged`))
    term.send('C-c')
    expect(await term.exitCode()).toBe(0)
    await expect(fetch(`http://127.0.0.1:${port}/ping`)).rejects.toThrow()
  })

  it('attaches to a running broker through its admin API', async () => {
    broker = await startBroker({ args: ['--store', 'memory', '--admin-key', ADMIN_KEY] })
    term = runInTerminal(['dashboard', '--attach', broker.url], { ...CI_ENV, BROKER_ADMIN_KEY: ADMIN_KEY }, SIZE)
    await term.waitFor(/attached http:\/\/127\.0\.0\.1:\d+/)
    const { hash } = await storeFlow(broker.url)
    await term.waitFor(new RegExp(`${hash.slice(0, 8)}\\s+oauth_2_3-legged\\s+\\S+\\s+stored\\s+\\d+s`))
    term.send('Enter')
    await term.waitFor(/client_secret\s+\[redacted\]/)
    term.send('q')
    expect(await term.exitCode()).toBe(0)
  })

  it('says in one line why it cannot attach: no admin API, wrong key, no key', async () => {
    broker = await startBroker({ args: ['--store', 'memory'] })
    term = runInTerminal(['dashboard', '--attach', broker.url, '--admin-key', ADMIN_KEY], CI_ENV, SIZE)
    expect(await term.exitCode()).toBe(2)
    expect(term.screen()).toMatch(/has no admin API: start it with --admin-key/)
    term.stop()
    await broker.stop()

    broker = await startBroker({ args: ['--store', 'memory', '--admin-key', ADMIN_KEY] })
    term = runInTerminal(['dashboard', '--attach', broker.url, '--admin-key', `${ADMIN_KEY}-wrong`], CI_ENV, SIZE)
    expect(await term.exitCode()).toBe(2)
    expect(term.screen()).toMatch(/refused the admin key/)
    term.stop()

    term = runInTerminal(['dashboard', '--attach', broker.url], CI_ENV, SIZE)
    expect(await term.exitCode()).toBe(2)
    expect(term.screen()).toMatch(/--attach needs the admin key/)
  })

  it('exits 2 with a one-line reason without a terminal', async () => {
    const { code, stdout, stderr } = await runCli(['dashboard', '--port', String(await freePort())])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr.split('\n')[0]).toBe('Error USAGE: broker dashboard needs a terminal: stdin is not a TTY.')
  })

  it('says in one line when its port is taken', async () => {
    broker = await startBroker({ args: ['--store', 'memory'] })
    term = runInTerminal(['dashboard', '--port', String(broker.port), '--store', 'memory'], CI_ENV, SIZE)
    expect(await term.exitCode()).toBe(2)
    expect(term.screen()).toContain(`Error USAGE: Port ${broker.port} is in use; pick another with --port.`)
  })

  it('says the terminal is too small instead of drawing', async () => {
    term = runInTerminal(['dashboard', '--port', String(await freePort()), '--store', 'memory'], CI_ENV, {
      columns: 60,
      rows: 15,
    })
    await term.waitFor(/Terminal too small \(60×15\)/)
    expect(term.screen()).not.toContain('1 Flows')
    term.send('q')
    expect(await term.exitCode()).toBe(0)
  })
})
