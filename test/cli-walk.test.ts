import { createServer } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, runCli, startBroker } from './helpers/broker.js'
import { spawnCli } from './helpers/cli.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { freePort } from './helpers/ports.js'

let broker: BrokerProcess
let provider: OAuth2Provider
let app: CallbackApp

beforeAll(async () => {
  ;[broker, provider, app] = await Promise.all([
    startBroker({ args: ['--store', 'memory'] }),
    startOAuth2Provider(),
    startCallbackApp(),
  ])
})
afterAll(async () => {
  await Promise.all([broker?.stop(), provider?.stop(), app?.close()])
})

/** Stores a record at the broker over HTTP, as an app would; its start URL. */
async function store(record: Record<string, string>): Promise<string> {
  const res = await fetch(`${broker.url}/store`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(record),
  })
  return ((await res.json()) as { url: string }).url
}

/** A fresh 3-legged flow whose start URL walks broker → provider → broker → app. */
function startUrl(): Promise<string> {
  return store({
    auth_version: '2',
    auth_leg: '3',
    client_id: 'walker',
    client_secret: 'w-secret',
    authorize_url: provider.authorizeUrl,
    access_url: provider.tokenUrl,
    scope: 'openid',
    callback: app.callback,
    state: 'app-state',
  })
}

describe('broker walk', () => {
  it('follows a real OAuth 2 chain hop by hop, keeping the cookie, and decodes the parameters', async () => {
    const { code, stdout, stderr } = await runCli(['walk', await startUrl(), '--json'])
    expect(code, stderr).toBe(0)
    const out = JSON.parse(stdout)
    expect(out.stopped).toBe('done')
    expect(out.final).toEqual({ status: 200, status_text: 'OK', content_type: 'text/plain', body: 'app got it' })
    expect(out.hops.map((h: { status: number }) => h.status)).toEqual([302, 302, 302, 200])
    const [start, authorize, callback, appHop] = out.hops
    expect(start.cookies.length).toBeGreaterThan(0)
    expect(authorize.params).toMatchObject({
      client_id: 'walker',
      response_type: 'code',
      scope: 'openid',
      redirect_uri: `http://localhost:${broker.port}/callback`,
      code_challenge_method: 'S256',
    })
    expect(authorize.params.code_challenge).toBeTruthy()
    // The broker accepted the callback, so the walker carried its cookie: the app got the token.
    expect(appHop.url).toContain(app.callback)
    expect(app.received.at(-1)!.query.access_token).toMatch(/^ey/)
    // Codes and tokens are shortened, never printed whole.
    const realCode = provider.tokenRequests.at(-1)!.code!
    expect(callback.params.code).toMatch(/…/)
    expect(stdout).not.toContain(realCode)
    expect(stdout).not.toContain(app.received.at(-1)!.query.access_token)
  })

  it('prints readable hops and stops before leaving the --allow-host hosts', async () => {
    const providerHost = new URL(provider.authorizeUrl).host
    const { code, stdout, stderr } = await runCli([
      'walk',
      await startUrl(),
      '--allow-host',
      `localhost:${broker.port}`,
    ])
    expect(code, stderr).toBe(0)
    expect(stdout).toMatch(/^#1 {2}GET http:\/\/localhost:\d+\/start\?hash=[\w-]{4}…[\w-]{4} {2}→ 302/)
    expect(stdout).toContain(`Location: http://${providerHost}/authorize?client_id=walker`)
    expect(stdout).not.toContain('#2')
    expect(stderr).toContain(`1 hop; stopped before ${providerHost}: not an --allow-host`)
  })

  it('stops at --max-hops', async () => {
    const { code, stdout } = await runCli(['walk', await startUrl(), '--max-hops', '2', '--json'])
    expect(code).toBe(0)
    const out = JSON.parse(stdout)
    expect(out.hops).toHaveLength(2)
    expect(out.stopped).toBe('max_hops')
    expect(out.next).toContain('/callback?')
  })

  it('waits for Enter between hops with --step', async () => {
    const run = spawnCli(['walk', await startUrl(), '--step'])
    await run.waitFor(/press Enter/)
    expect(run.stdout()).toContain('#1')
    expect(run.stdout()).not.toContain('#2')
    run.write('\n')
    await run.waitFor(/#2 /, 'stdout')
    await new Promise((r) => setTimeout(r, 300))
    expect(run.stdout()).not.toContain('#3')
    run.write('\n\n\n')
    const { code, stdout } = await run.exited
    expect(code).toBe(0)
    expect(stdout).toContain('#4')
  })

  it('answers a bad flag value or a missing URL as a one-line usage error (exit 2), JSON under --json', async () => {
    const json = await runCli(['walk', 'http://127.0.0.1:9/', '--max-hops', '0', '--json'])
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout)).toEqual({
      error: {
        code: 'USAGE',
        message: '--max-hops: Expected an integer greater than or equal to 1 but received: 0; see --help.',
      },
    })
    const missing = await runCli(['walk'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe('Error USAGE: Missing required argument: url (The URL to start from); see --help.\n')
  })

  it('shows the answer that ends the chain: a used start URL is a 409 FLOW_STARTED, exit 1', async () => {
    const url = await startUrl()
    // Started, not finished: the user went to the provider and never came back.
    expect((await runCli(['walk', url, '--max-hops', '1'])).code).toBe(0)
    const { code, stdout, stderr } = await runCli(['walk', url])
    expect(code).toBe(1)
    expect(stdout).toMatch(/^#1 {2}GET \S+ {2}→ 409\n/)
    expect(stdout).toContain('    answer 409 Conflict (application/json)\n    | {\n    |   "code": "FLOW_STARTED",')
    expect(stderr).toContain('1 hop; the chain ended in an error: 409 Conflict.')
    expect(stderr).not.toContain('is not a redirect')

    const json = await runCli(['walk', url, '--json'])
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toMatchObject({
      stopped: 'http_error',
      final: { status: 409, status_text: 'Conflict', body: { code: 'FLOW_STARTED' } },
    })
  })

  it('shows a 502 at the callback with its body, exit 1', async () => {
    const url = await store({
      auth_version: '2',
      auth_leg: '3',
      client_id: 'walker',
      authorize_url: provider.authorizeUrl,
      access_url: `http://127.0.0.1:${await freePort()}/token`,
    })
    const { code, stdout, stderr } = await runCli(['walk', url])
    expect(code).toBe(1)
    expect(stdout).toMatch(/#3 {2}GET http:\/\/localhost:\d+\/callback\?\S+ {2}→ 502/)
    expect(stdout).toMatch(
      /answer 502 Bad Gateway \(application\/json\)\n {4}\| \{\n {4}\| {3}"code": "PROVIDER_ERROR"/,
    )
    expect(stderr).toContain('3 hops; the chain ended in an error: 502 Bad Gateway.')
  })

  it("shows a 2-legged flow's JSON token answer as the result, the token shortened, exit 0", async () => {
    const url = await store({
      auth_version: '2',
      auth_leg: '2',
      client_id: 'walker',
      client_secret: 'w-secret',
      access_url: provider.tokenUrl,
    })
    const { code, stdout, stderr } = await runCli(['walk', url])
    expect(code, stderr).toBe(0)
    expect(stdout).toMatch(/answer 200 OK \(application\/json\)\n {4}\| \{\n/)
    const token = /"access_token": "([^"]+)"/.exec(stdout)?.[1]
    expect(token).toMatch(/^eyJ\w…[\w-]{4}$/)
    expect(stdout).toMatch(/"token_type": "Bearer"/)
    expect(stderr).toContain('1 hop; the final answer: 200 OK.')
    expect(stderr).not.toContain('is not a redirect')
  })

  it('exits 1 naming the host when a hop gets no answer', async () => {
    const port = await freePort()
    const { code, stdout, stderr } = await runCli(['walk', `http://127.0.0.1:${port}/nowhere`])
    expect(code).toBe(1)
    expect(stdout).toContain('no answer (ECONNREFUSED)')
    expect(stderr).toContain(`127.0.0.1:${port}: ECONNREFUSED`)
  })
})

describe('broker hash-check', () => {
  it('shows the record with secrets redacted, the plugin, progress and seconds left', async () => {
    const url = await startUrl()
    const hash = new URL(url).searchParams.get('hash')!
    const { code, stdout, stderr } = await runCli(['hash-check', hash], { env: { BROKER_URL: broker.url } })
    expect(code, stderr).toBe(0)
    expect(stdout).toMatch(/plugin\s+oauth_2_3-legged — OAuth 2 authorization code/)
    expect(stdout).toMatch(/progress\s+stored/)
    expect(stdout).toMatch(/expires\s+in \d+ s/)
    expect(stdout).toMatch(/client_id\s+walker/)
    expect(stdout).toMatch(/client_secret\s+\[redacted\]/)
    expect(stdout).not.toContain('w-secret')

    await runCli(['walk', url])
    const json = await runCli(['hash-check', hash, '--json', '--broker', broker.url])
    const out = JSON.parse(json.stdout)
    expect(out).toMatchObject({ hash, plugin: 'oauth_2_3-legged', progress: 'completed' })
    expect(out.expires_in).toBeGreaterThan(0)
  })

  it("exits 1 for an unknown hash with the broker's message", async () => {
    const { code, stdout, stderr } = await runCli(['hash-check', 'nope', '--broker', broker.url])
    expect(code).toBe(1)
    expect(stdout).toBe('')
    expect(stderr).toContain('Error UNKNOWN_HASH: No flow is stored under this hash')
  })

  it('takes a hash that starts with "-" as the hash, not as a flag', async () => {
    const { code, stdout, stderr } = await runCli([
      'hash-check',
      '-Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3Jh',
      '--broker',
      broker.url,
      '--json',
    ])
    expect(code, stderr).toBe(1)
    expect(JSON.parse(stdout).error.code).toBe('UNKNOWN_HASH')
  })

  it('watches until the flow completes', async () => {
    const url = await startUrl()
    const hash = new URL(url).searchParams.get('hash')!
    const run = spawnCli(['hash-check', hash, '--watch', '--broker', broker.url])
    await run.waitFor(/stored, expires in \d+ s/, 'stdout')
    await runCli(['walk', url])
    const { code, stdout } = await run.exited
    expect(code).toBe(0)
    expect(stdout).toMatch(/completed, expires in \d+ s/)
  })
})

describe('what walk and hash-check print to a terminal', () => {
  // OSC 52 (writes the clipboard), a window title, clear screen: shown as text, never sent raw.
  const HOSTILE = '\u001b]52;c;ZXZpbA==\u0007\u001b]0;pwned\u0007\u001b[2J'
  // eslint-disable-next-line no-control-regex
  const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/

  it('walk escapes control characters in parameters and the body, and --json keeps them exact', async () => {
    const page = createServer((req, res) => {
      if (req.url === '/') {
        res.writeHead(302, { location: `/next?state=${encodeURIComponent(HOSTILE)}` }).end()
        return
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`body ${HOSTILE}`)
    })
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', () => r()))
    const address = page.address()
    const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`
    try {
      const human = await runCli(['walk', url])
      expect(human.code, human.stderr).toBe(0)
      expect(human.stdout).not.toMatch(RAW)
      expect(human.stdout).toContain('\\x1b]52;c;ZXZpbA==\\x07')
      const json = await runCli(['walk', url, '--json'])
      const out = JSON.parse(json.stdout)
      expect(out.final.body).toBe(`body ${HOSTILE}`)
      expect(out.hops.map((h: { params: { state?: string } }) => h.params.state)).toContain(HOSTILE)
    } finally {
      page.close()
    }
  })

  it('hash-check escapes control characters in stored fields', async () => {
    const res = await fetch(`${broker.url}/store`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth_version: '2',
        auth_leg: '2',
        client_id: 'c',
        access_url: provider.tokenUrl,
        state: HOSTILE,
      }),
    })
    expect(res.status).toBe(200)
    const { hash } = (await res.json()) as { hash: string }
    const human = await runCli(['hash-check', hash, '--broker', broker.url])
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).not.toMatch(RAW)
    expect(human.stdout).toContain('\\x1b]0;pwned\\x07')
    const json = JSON.parse((await runCli(['hash-check', hash, '--broker', broker.url, '--json'])).stdout)
    expect(json.record.state).toBe(HOSTILE)
  })
})
