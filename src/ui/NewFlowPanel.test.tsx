import type { AddressInfo } from 'node:net'
import { render } from 'ink-testing-library'
import { describe, expect, it, vi } from 'vitest'
import { memoryBroker } from '../../test/helpers/deps.js'
import { KEY, settle } from '../../test/helpers/ink.js'
import { CLIENT_AUTH_METHODS } from '../../flows/lib/client-auth.js'
import { buildServer } from '../broker/http/build.js'
import { BrokerClient } from '../services/broker-client.js'
import { formFields, PRESETS } from './new-flow-form.js'
import { NewFlowPanel } from './NewFlowPanel.js'
import type { DashboardBroker } from './types.js'

const panel = { active: true, height: 20, width: 100, notify: vi.fn() }

function setup() {
  const broker: DashboardBroker = {
    url: 'http://localhost:3000',
    store: vi.fn(async () => ({
      hash: 'H4sh0000',
      url: 'http://localhost:3000/start?hash=H4sh0000',
      plugin: 'oauth_2_2-legged',
      expires_in: 60,
    })),
    hashCheck: vi.fn(),
  }
  const openUrl = vi.fn(async () => ({
    opened: false,
    message: 'No browser here (no DISPLAY): open the URL yourself.',
  }))
  const onTyping = vi.fn()
  const app = render(<NewFlowPanel {...panel} onTyping={onTyping} broker={broker} openUrl={openUrl} />)
  return { ...app, broker, openUrl, onTyping }
}

async function keys(stdin: { write(s: string): void }, ...seq: string[]) {
  for (const k of seq) {
    stdin.write(k)
    await settle()
  }
}

/** Waits (2 s at most) for the frame to match: a change that renders twice (a typed value, then what it makes
 * optional) may take more turns than settle() on a busy machine. */
async function shows(lastFrame: () => string | undefined, re: RegExp) {
  for (let i = 0; i < 400 && !re.test(lastFrame() ?? ''); i++) await new Promise((r) => setTimeout(r, 5))
  expect(lastFrame()).toMatch(re)
}

describe('NewFlowPanel', () => {
  it('offers the presets of broker store and the fields each requires', async () => {
    const { lastFrame, stdin } = setup()
    expect(lastFrame()).toMatch(/preset\s+‹ oauth2-3 ›/)
    expect(lastFrame()).toMatch(/client_id[\s\S]*authorize_url[\s\S]*access_url[\s\S]*callback \(optional\)/)
    // The 3-legged flow takes a client secret (a confidential client), optional and masked.
    expect(lastFrame()).toMatch(
      /client_id\s*\n.*client_secret \(optional\)\s*\n.*issuer \(optional\)\s*\n.*authorize_url/,
    )
    await keys(stdin, KEY.right)
    expect(lastFrame()).toMatch(/‹ oauth2-2 › OAuth 2 client credentials/)
    expect(lastFrame()).toContain('client_secret')
  })

  it('validates URLs as typed, masks secrets, stores, and opens the start URL on o', async () => {
    const { lastFrame, stdin, broker, openUrl, onTyping } = setup()
    await keys(stdin, KEY.right, KEY.down)
    await vi.waitFor(() => expect(onTyping).toHaveBeenLastCalledWith(true))
    // client_id, client_secret, issuer (left empty: the URL below is typed into access_url)
    await keys(stdin, 'my-client', KEY.enter, 'sup3r-secret', KEY.enter, KEY.enter)
    expect(lastFrame()).not.toContain('sup3r-secret')
    expect(lastFrame()).toContain('************')
    await keys(stdin, 'not a url')
    expect(lastFrame()).toContain('Enter an absolute http(s) URL')
    await keys(stdin, ...Array(9).fill(KEY.backspace), 'https://idp.example/token')
    expect(lastFrame()).not.toContain('Enter an absolute http(s) URL')
    await keys(stdin, KEY.enter, KEY.down, KEY.down, KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toContain('Stored (oauth2-2)'))
    expect(broker.store).toHaveBeenCalledWith({
      auth_version: '2',
      auth_leg: '2',
      client_id: 'my-client',
      client_secret: 'sup3r-secret',
      access_url: 'https://idp.example/token',
    })
    expect(lastFrame()).toContain('http://localhost:3000/start?hash=H4sh0000')
    // The secret typed is gone from the form once stored.
    expect(lastFrame()).not.toContain('****')
    await keys(stdin, 'o')
    expect(openUrl).toHaveBeenCalledWith('http://localhost:3000/start?hash=H4sh0000')
    // No browser: said, with the URL to open by hand.
    await vi.waitFor(() =>
      expect(lastFrame()).toMatch(
        /No browser here \(no DISPLAY\): open the URL yourself\.\n {2}http:\/\/localhost:3000\/start\?hash=H4sh0000/,
      ),
    )
    await keys(stdin, 'n')
    expect(lastFrame()).not.toContain('*')
  })

  it('does not store while a required field is empty', async () => {
    const { lastFrame, stdin, broker } = setup()
    await keys(stdin, KEY.up, ...Array(12).fill(KEY.down), KEY.enter)
    expect(lastFrame()).toContain('fill in the required fields first')
    expect(broker.store).not.toHaveBeenCalled()
  })
})

/** A real broker (embedded store) listening on loopback, and the client the dashboard uses for it. */
async function realBroker() {
  const broker = await memoryBroker()
  const app = await buildServer(broker)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const client = new BrokerClient(`http://127.0.0.1:${port}`)
  return {
    client,
    close: async () => {
      await app.close()
      await broker.close()
    },
  }
}

const OAUTH1_VALUES: Record<string, string> = {
  consumer_key: 'dashboard-consumer',
  consumer_secret: 'c0nsumer-s3cret',
  request_url: 'http://127.0.0.1:9/oauth/request_token',
  authorize_url: 'http://127.0.0.1:9/oauth/authorize',
  access_url: 'http://127.0.0.1:9/oauth/access_token',
  oauth_token: 'token-of-the-user',
  oauth_token_secret: 't0ken-s3cret',
  verify_url: 'http://127.0.0.1:9/verify',
  callback: 'http://localhost:9/cb',
}

describe('NewFlowPanel against a broker', () => {
  it.each(['oauth1-3', 'oauth1-2', 'oauth1-1', 'oauth1-echo'])(
    'stores an OAuth 1.0a flow (%s): the consumer secret is asked for, masked, and sent',
    async (preset) => {
      const real = await realBroker()
      try {
        const store = vi.spyOn(real.client, 'store')
        const app = render(<NewFlowPanel {...panel} onTyping={vi.fn()} broker={real.client} openUrl={vi.fn()} />)
        await keys(app.stdin, ...Array(PRESETS.indexOf(preset)).fill(KEY.right))
        expect(app.lastFrame()).toContain(`‹ ${preset} ›`)
        expect(app.lastFrame()).toMatch(/consumer_secret/)
        await keys(app.stdin, KEY.down)
        for (const f of formFields(preset)) await keys(app.stdin, OAUTH1_VALUES[f.field] ?? '', KEY.enter)
        expect(app.lastFrame()).not.toContain('c0nsumer-s3cret')
        await keys(app.stdin, KEY.enter)
        await vi.waitFor(() => expect(app.lastFrame()).toContain(`Stored (${preset})`))
        expect(store.mock.calls[0]![0]).toMatchObject({ consumer_secret: 'c0nsumer-s3cret' })
        app.unmount()
      } finally {
        await real.close()
      }
    },
  )

  it("asks for the oauth_token_secret beside an Echo or 1-legged flow's oauth_token", () => {
    for (const preset of ['oauth1-echo', 'oauth1-1']) {
      const names = formFields(preset).map((f) => f.field)
      expect(names.indexOf('oauth_token_secret')).toBe(names.indexOf('oauth_token') + 1)
    }
    expect(formFields('oauth1-3').map((f) => f.field)).not.toContain('oauth_token')
  })
})

describe('NewFlowPanel errors', () => {
  it("clears the broker's refusal when another preset is picked", async () => {
    const { lastFrame, stdin, broker } = setup()
    vi.mocked(broker.store).mockRejectedValueOnce(new Error('VALIDATION: access_url is not allowed.'))
    // client_id, client_secret, issuer (left empty), access_url, callback, client_auth, Store
    await keys(stdin, KEY.right, KEY.down, 'cid', KEY.enter, 'secret', KEY.enter, KEY.enter)
    await keys(stdin, 'https://idp.example/token', KEY.enter, KEY.enter, KEY.enter, KEY.enter)
    await vi.waitFor(() => expect(lastFrame()).toContain('VALIDATION: access_url is not allowed.'))
    await keys(stdin, ...Array(8).fill(KEY.up), KEY.right)
    expect(lastFrame()).toContain('‹ oauth2-refresh ›')
    expect(lastFrame()).not.toContain('VALIDATION')
  })
})

describe('NewFlowPanel OAuth 2 discovery and client authentication', () => {
  it('takes an issuer (the endpoints then optional) and a client_auth picked among what the broker accepts', async () => {
    const { lastFrame, stdin, broker } = setup()
    await keys(stdin, KEY.right)
    expect(lastFrame()).toMatch(/client_secret\s*\n.*issuer \(optional\)\s*\n.*access_url\s/)
    expect(lastFrame()).toMatch(/client_auth \(optional\)\s+‹ broker default ›/)
    // client_id, client_secret, issuer
    await keys(stdin, KEY.down, 'cid', KEY.enter, 'secret', KEY.enter, 'https://idp.example')
    await shows(lastFrame, /access_url \(optional\)/)
    await keys(stdin, KEY.enter, KEY.enter, KEY.enter)
    expect(lastFrame()).toMatch(/› client_auth \(optional\)/)
    await keys(stdin, KEY.right, KEY.right)
    expect(lastFrame()).toContain('‹ client_secret_basic ›')
    await keys(stdin, KEY.right, KEY.right)
    expect(lastFrame()).toContain('‹ private_key_jwt ›')
    // private_key_jwt wants the key: a required field appears.
    expect(lastFrame()).toMatch(/private_key\s/)
    expect(lastFrame()).toContain('fill in the required fields first')
    await keys(stdin, KEY.left, KEY.left)
    expect(lastFrame()).toContain('‹ client_secret_basic ›')
    expect(lastFrame()).not.toMatch(/private_key\s/)
    await keys(stdin, KEY.enter, KEY.enter)
    await vi.waitFor(() => expect(broker.store).toHaveBeenCalled())
    expect(broker.store).toHaveBeenCalledWith({
      auth_version: '2',
      auth_leg: '2',
      client_id: 'cid',
      client_secret: 'secret',
      issuer: 'https://idp.example',
      client_auth: 'client_secret_basic',
    })
  })

  it('offers exactly the client_auth methods the broker validates, the default first', () => {
    const field = formFields('oauth2-3').find((f) => f.field === 'client_auth')!
    expect(field.options).toEqual(['', ...CLIENT_AUTH_METHODS])
    for (const preset of PRESETS.filter((p) => p.startsWith('oauth1')))
      expect(formFields(preset).map((f) => f.field)).not.toContain('client_auth')
  })
})
