import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startCallbackApp, type CallbackApp } from './app.js'
import { type BrokerProcess, startBroker } from './broker.js'
import { Browser } from './browser.js'
import { type OAuth1Provider, startOAuth1Provider } from './oauth1-provider.js'
import { type OAuth2Provider, startOAuth2Provider } from './oauth2-provider.js'

/**
 * Stores a record at a running broker and returns its hash and start URL. With `tries` above 1, a 503 is sent
 * again 200 ms later, as an app does after "try again shortly" (each try stores a flow of its own).
 */
export async function storeAt(
  brokerUrl: string,
  record: Record<string, string>,
  form = false,
  tries = 1,
): Promise<{ hash: string; url: string }> {
  for (let tried = 1; ; tried++) {
    const res = await fetch(`${brokerUrl}/store`, {
      method: 'POST',
      headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' },
      body: form ? new URLSearchParams(record).toString() : JSON.stringify(record),
    })
    if (res.status !== 503 || tried >= tries) {
      expect(res.status, await res.clone().text()).toBe(200)
      return (await res.json()) as { hash: string; url: string }
    }
    await res.arrayBuffer()
    await new Promise((r) => setTimeout(r, 200))
  }
}

/**
 * The broker's flow suite, end to end against one running `broker serve` whose store is chosen by
 * `args` (real Redis, embedded, Cluster, Sentinel…): OAuth 2 3-legged with PKCE, 2-legged,
 * refresh, password, a Guardian form body, and OAuth 1.0a 3- and 2-legged.
 */
export function flowSuite(label: string, setup: () => { args: string[]; env?: Record<string, string> }): void {
  describe(`flow suite, ${label}`, () => {
    let broker: BrokerProcess
    let provider: OAuth2Provider
    let provider1: OAuth1Provider
    let app: CallbackApp
    const lastDelivery = () => app.received[app.received.length - 1]!
    const store = (record: Record<string, string>, form = false) => storeAt(broker.url, record, form)

    beforeAll(async () => {
      ;[provider, provider1, app] = await Promise.all([
        startOAuth2Provider(),
        startOAuth1Provider(),
        startCallbackApp(),
      ])
      const { args, env } = setup()
      broker = await startBroker({ args, env })
      provider1.addConsumer({ key: 'suite-consumer', secret: 'suite-consumer-secret' })
    })
    afterAll(async () => {
      await broker?.stop()
      await Promise.all([provider?.stop(), provider1?.stop(), app?.close()])
    })

    it('runs OAuth 2 3-legged with PKCE verified by the provider and delivers to the app', async () => {
      const { url } = await store({
        auth_version: '2',
        auth_leg: '3',
        client_id: 'app-client',
        client_secret: 'app-secret',
        authorize_url: provider.authorizeUrl,
        access_url: provider.tokenUrl,
        callback: app.callback,
        scope: 'openid profile',
        state: 'my-app-state',
      })
      const res = await new Browser().go(url)
      expect(res.status).toBe(200)
      expect(res.body).toBe('app got it')
      // start → provider authorize → broker callback → app
      expect(res.hops.map((h) => h.status)).toEqual([302, 302, 302, 200])
      const got = lastDelivery().query
      expect(got.access_token).toMatch(/^ey/)
      expect(got.refresh_token).toBeTruthy()
      expect(got.token_type).toBe('Bearer')
      expect(got.state).toBe('my-app-state')
      expect(provider.authorizeRequests.at(-1)!.code_challenge_method).toBe('S256')
      const token = provider.tokenRequests.at(-1)!
      expect(token.grant_type).toBe('authorization_code')
      expect(token.code_verifier).toMatch(/^[\w-]{43}$/)
    })

    it('runs OAuth 2 2-legged client credentials, then refresh_token with the refresh token', async () => {
      const { url } = await store({
        auth_version: '2',
        auth_leg: '2',
        client_id: 'c',
        client_secret: 's',
        access_url: provider.tokenUrl,
        callback: app.callback,
        scope: 'api',
      })
      await new Browser().go(url)
      expect(lastDelivery().query.access_token).toMatch(/^ey/)
      expect(provider.tokenRequests.at(-1)!.grant_type).toBe('client_credentials')

      const refreshed = await store({
        auth_version: '2',
        auth_leg: '2',
        grant_type: 'refresh_token',
        refresh_token: 'rt-123',
        client_id: 'c',
        access_url: provider.tokenUrl,
      })
      const res = await fetch(`${broker.url}/start?hash=${refreshed.hash}`)
      expect(res.status).toBe(200)
      const body = (await res.json()) as Record<string, string>
      expect(body.access_token).toMatch(/^ey/)
      expect(body.refresh_token).toBeTruthy()
      expect(provider.tokenRequests.at(-1)).toMatchObject({ grant_type: 'refresh_token', refresh_token: 'rt-123' })
    })

    it('runs the OAuth 2 resource owner password flow', async () => {
      const { url } = await store({
        auth_flow: 'owner_resources',
        auth_version: '2',
        client_id: 'c',
        access_url: provider.tokenUrl,
        username: 'alice',
        password: 'pw',
        callback: app.callback,
      })
      const res = await new Browser().go(url)
      expect(res.status).toBe(200)
      expect(lastDelivery().query.access_token).toMatch(/^ey/)
      expect(provider.tokenRequests.at(-1)).toMatchObject({ grant_type: 'password', username: 'alice' })
    })

    it('completes a flow stored Guardian-style with a form body', async () => {
      const { url } = await store(
        {
          auth_type: 'oauth',
          auth_version: '2',
          auth_leg: '3',
          client_id: 'g',
          authorize_url: provider.authorizeUrl,
          access_url: provider.tokenUrl,
          callback: app.callback,
        },
        true,
      )
      const res = await new Browser().go(url)
      expect(res.body).toBe('app got it')
      expect(lastDelivery().query.access_token).toMatch(/^ey/)
    })

    it('runs OAuth 1.0a 3-legged and 2-legged against the local provider', async () => {
      const consumer = { consumer_key: 'suite-consumer', consumer_secret: 'suite-consumer-secret' }
      const three = await store({
        auth_version: '1',
        auth_leg: '3',
        ...consumer,
        request_url: provider1.requestUrl,
        authorize_url: provider1.authorizeUrl,
        access_url: provider1.accessUrl,
        callback: app.callback,
        state: 'o1',
      })
      const res = await new Browser().go(three.url)
      expect(res.body).toBe('app got it')
      expect(lastDelivery().query).toMatchObject({ state: 'o1' })
      expect(lastDelivery().query.access_token).toBeTruthy()
      expect(lastDelivery().query.access_secret).toBeTruthy()

      const two = await store({
        auth_version: '1',
        auth_leg: '2',
        ...consumer,
        request_url: provider1.requestUrl,
        access_url: provider1.accessUrl,
      })
      const answer = await fetch(`${broker.url}/start?hash=${two.hash}`)
      expect(answer.status).toBe(200)
      expect(((await answer.json()) as Record<string, string>).access_token).toBeTruthy()
    })
  })
}
