/**
 * The flows in a real browser: Debian's chromium, headless, driven by puppeteer-core. What the
 * fetch-based Browser helper cannot show: the binding cookie as Chromium keeps and sends it
 * (SameSite, Secure rules), the form_post page's script running under its Content-Security-Policy
 * hash, and the auto-posted form reaching the app. CHROMIUM names another binary.
 */
import { existsSync } from 'node:fs'
import { type Server, createServer } from 'node:http'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { storeAt } from './helpers/flow-suite.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { waitFor } from './helpers/ports.js'

const CHROMIUM = process.env.CHROMIUM ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p))

let browser: Browser
let broker: BrokerProcess
let provider: OAuth2Provider
let app: CallbackApp

beforeAll(async () => {
  if (!CHROMIUM) throw new Error('chromium is not installed (apt-get install chromium, or set CHROMIUM)')
  ;[provider, app, broker] = await Promise.all([
    startOAuth2Provider(),
    startCallbackApp(),
    startBroker({ args: ['--store', 'memory'] }),
  ])
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root in a container has no user namespaces for Chromium's sandbox.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  })
}, 60_000)

afterAll(async () => {
  await Promise.all([browser?.close(), broker?.stop(), provider?.stop(), app?.close()])
})

const record = (delivery: string) => ({
  auth_version: '2',
  auth_leg: '3',
  client_id: 'browser-app',
  client_secret: 'browser-secret',
  authorize_url: provider.authorizeUrl,
  access_url: provider.tokenUrl,
  callback: app.callback,
  state: `app-state-${delivery}`,
  delivery,
})

/** `record(delivery)` at a posting provider on `port` (startPostingProvider); `formPost`: it answers by response_mode=form_post. */
const atPostingProvider = (port: number, delivery: string, formPost = true) => ({
  ...record(delivery),
  authorize_url: `http://127.0.0.1:${port}/authorize`,
  access_url: `http://127.0.0.1:${port}/token`,
  ...(formPost ? { authorize_params: 'response_mode=form_post' } : {}),
})

/** Opens `url` in `page` until a request `stop` picks, which is aborted there: its URL (`what`: what is waited for). */
async function openUntil(page: Page, url: string, stop: (target: URL) => boolean, what: string): Promise<string> {
  await page.setRequestInterception(true)
  let stopped = ''
  page.on('request', (req) => {
    if (stop(new URL(req.url()))) {
      stopped = req.url()
      return void req.abort()
    }
    void req.continue()
  })
  await page.goto(url).catch(() => undefined)
  await waitFor(async () => stopped !== '', 15_000, what)
  return stopped
}

/** Opens `url` in a fresh browser context (its own cookies) and waits for the app to receive one more delivery. */
async function runInBrowser(url: string): Promise<{ delivered: CallbackApp['received'][number]; console: string[] }> {
  const before = app.received.length
  const context = await browser.createBrowserContext()
  const console: string[] = []
  try {
    const page = await context.newPage()
    page.on('console', (m) => console.push(`${m.type()}: ${m.text()}`))
    await page.goto(url, { waitUntil: 'load' })
    await waitFor(async () => app.received.length > before, 15_000, 'the app to receive the delivery').catch(
      async (err: Error) => {
        throw new Error(`${err.message}; the browser is at ${page.url()}: ${(await page.content()).slice(0, 300)}`)
      },
    )
    return { delivered: app.received[before]!, console }
  } finally {
    await context.close()
  }
}

describe('in Chromium', () => {
  it('runs OAuth 2 3-legged with PKCE and delivers to the callback in the query', async () => {
    const { url } = await storeAt(broker.url, record('query'))
    const { delivered } = await runInBrowser(url)
    expect(delivered.method).toBe('GET')
    expect(delivered.query.error, JSON.stringify(delivered.query)).toBeUndefined()
    expect(delivered.query.access_token).toBeTruthy()
    expect(delivered.query.state).toBe('app-state-query')
    // The provider saw PKCE: the broker's verifier went with the code.
    expect(provider.tokenRequests.at(-1)?.code_verifier).toBeTruthy()
  }, 60_000)

  it('delivers with form_post: the page script runs under its CSP hash and posts the tokens to the app', async () => {
    const { url } = await storeAt(broker.url, record('form_post'))
    const { delivered, console } = await runInBrowser(url)
    expect(console.filter((line) => /Content Security Policy|Refused/i.test(line))).toEqual([])
    expect(delivered.method).toBe('POST')
    expect(delivered.body.error, JSON.stringify(delivered.body)).toBeUndefined()
    expect(delivered.body.access_token).toBeTruthy()
    expect(delivered.body.state).toBe('app-state-form_post')
    expect(delivered.query).toEqual({})
  }, 60_000)

  it('refuses a callback that comes back without the binding cookie (another browser)', async () => {
    const { url } = await storeAt(broker.url, record('query'))
    // The first browser follows the start URL only as far as the provider's redirect to /callback.
    const first = await browser.createBrowserContext()
    const second = await browser.createBrowserContext()
    try {
      const atBroker = (target: URL) => target.port === String(broker.port) && target.pathname === '/callback'
      const callbackUrl = await openUntil(await first.newPage(), url, atBroker, 'the redirect to /callback')
      const other = await second.newPage()
      const answer = await other.goto(callbackUrl)
      expect(answer?.status()).toBe(403)
      expect(await answer?.text()).toContain('COOKIE_MISMATCH')
    } finally {
      await Promise.all([first.close(), second.close()])
    }
  }, 60_000)

  it('completes when the provider answers with response_mode=form_post (a cross-site POST to /callback)', async () => {
    const { port, close } = await startPostingProvider()
    try {
      const { url } = await storeAt(broker.url, atPostingProvider(port, 'query'))
      const { delivered } = await runInBrowser(url)
      expect(delivered.query.error, JSON.stringify(delivered.query)).toBeUndefined()
      expect(delivered.query.access_token).toBe('posted-token')
    } finally {
      await close()
    }
  }, 60_000)

  // Issue 27, 5: a field named `submit` is the form's `submit` property, shadowing the method.
  it('posts the form_post page whose token answer has a field named submit', async () => {
    const { port, close } = await startPostingProvider({ redirect: true, token: { submit: 'shadow' } })
    try {
      const { url } = await storeAt(broker.url, atPostingProvider(port, 'form_post', false))
      const { delivered, console } = await runInBrowser(url)
      expect(console.filter((line) => /Content Security Policy|Refused|TypeError/i.test(line))).toEqual([])
      expect(delivered.method).toBe('POST')
      expect(delivered.body).toMatchObject({ access_token: 'posted-token', submit: 'shadow' })
    } finally {
      await close()
    }
  }, 60_000)

  it('posts the repost page of a cross-site answer that has a field named submit', async () => {
    const { port, close } = await startPostingProvider({ posted: { submit: 'shadow' } })
    try {
      const { url } = await storeAt(broker.url, atPostingProvider(port, 'query'))
      const { delivered, console } = await runInBrowser(url)
      expect(console.filter((line) => /Content Security Policy|Refused|TypeError/i.test(line))).toEqual([])
      expect(delivered.query).toMatchObject({ access_token: 'posted-token', submit: 'shadow' })
    } finally {
      await close()
    }
  }, 60_000)

  it("delivers a provider's error posted by form_post to the app, with no token", async () => {
    const { port, close } = await startPostingProvider({
      answer: { error: 'access_denied', error_description: 'The user said no' },
    })
    try {
      const { url } = await storeAt(broker.url, atPostingProvider(port, 'query'))
      const { delivered } = await runInBrowser(url)
      expect(delivered.query).toMatchObject({ error: 'access_denied', error_description: 'The user said no' })
      expect(delivered.query.access_token).toBeUndefined()
    } finally {
      await close()
    }
  }, 60_000)

  it('refuses the posted answer in a browser that does not hold the flow cookie, even posted again', async () => {
    const { port, close } = await startPostingProvider()
    const first = await browser.createBrowserContext()
    const second = await browser.createBrowserContext()
    try {
      const { url } = await storeAt(broker.url, atPostingProvider(port, 'query'))
      // The victim's browser gets as far as the provider's page; its authorize URL names the flow's state.
      const atProvider = (target: URL) => target.port === String(port)
      const authorize = await openUntil(await first.newPage(), url, atProvider, 'the redirect to the provider')
      // Another browser, without the cookie, is made to post that answer: after one more post, it is refused.
      const other = await second.newPage()
      await other.goto(authorize)
      await waitFor(async () => (await other.content()).includes('COOKIE_MISMATCH'), 15_000, 'COOKIE_MISMATCH')
    } finally {
      await Promise.all([first.close(), second.close(), close()])
    }
  }, 60_000)
})

/**
 * A provider on another site (127.0.0.1; the broker is localhost) that posts its answer back
 * (response_mode=form_post), or redirects it back with `redirect: true`; `posted` adds fields to
 * that answer, `token` to its token answer; `answer` replaces the code (with an error: oidcc-client-test's
 * form_post error case).
 */
async function startPostingProvider(
  opts: {
    answer?: Record<string, string>
    posted?: Record<string, string>
    token?: Record<string, unknown>
    redirect?: boolean
  } = {},
): Promise<{ port: number; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    if (url.pathname === '/authorize') {
      const fields = {
        ...(opts.answer ?? { code: 'posted-code' }),
        state: url.searchParams.get('state') ?? '',
        ...opts.posted,
      }
      if (opts.redirect) {
        const back = new URL(url.searchParams.get('redirect_uri')!)
        for (const [k, v] of Object.entries(fields)) back.searchParams.set(k, v)
        res.writeHead(302, { location: back.toString() })
        return void res.end()
      }
      const inputs = Object.entries(fields)
        .map(([k, v]) => `<input type="hidden" name="${k}" value="${v}">`)
        .join('')
      res.writeHead(200, { 'content-type': 'text/html' })
      return void res.end(
        `<form method="post" action="${url.searchParams.get('redirect_uri')}">${inputs}</form><script>HTMLFormElement.prototype.submit.call(document.forms[0])</script>`,
      )
    }
    req.resume()
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ access_token: 'posted-token', token_type: 'Bearer', ...opts.token }))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const { port } = server.address() as { port: number }
  return { port, close: () => new Promise<void>((r) => server.close(() => r())) }
}
