import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallbackApp, startCallbackApp } from './helpers/app.js'
import { type BrokerProcess, ROOT, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { storeAt } from './helpers/flow-suite.js'
import { callWithSdkClient, type McpShape, startMcpSdkServer } from './helpers/mcp-sdk-server.js'
import { freePort, waitFor } from './helpers/ports.js'

// Issue 35: MCP servers as the official TypeScript SDK builds them (its mcpAuthRouter, its handlers, its
// bearer middleware and demo provider), each shape with `resource` alone; the delivered token is then
// used by the SDK's own Client to list and call tools.
let broker: BrokerProcess
let app: CallbackApp

beforeAll(async () => {
  ;[broker, app] = await Promise.all([startBroker({ args: ['--store', 'memory'] }), startCallbackApp()])
}, 30_000)

afterAll(async () => {
  await Promise.all([broker?.stop(), app?.close()])
})

/** Stores `resource` alone, walks the browser through the server's (immediate) consent; returns what the app got. */
async function signIn(resource: string): Promise<Record<string, string>> {
  const { url } = await storeAt(broker.url, { resource, callback: app.callback })
  const res = await new Browser().go(url)
  expect(res.body, JSON.stringify(res.hops)).toBe('app got it')
  return app.received.at(-1)!.query
}

describe.each<McpShape>(['sdk-default', 'path-aware', 'no-prm', 'no-metadata', 'split'])(
  'an MCP server built with the SDK, shape %s',
  (shape) => {
    it('gets a token with resource alone that the SDK client then uses', async () => {
      const mcp = await startMcpSdkServer(shape)
      try {
        const got = await signIn(mcp.resource)
        expect(got.error_description).toBeUndefined()
        expect(got.access_token).toBeTruthy()
        expect(got.resource).toBe(mcp.resource)
        expect(got.issuer).toBe(mcp.issuer)
        const used = await callWithSdkClient(mcp.resource, got.access_token!)
        expect(used.tools).toContain('whoami')
        expect(used.whoami).toBe(got.client_id)
        // /hash-check says what was found and what the broker sends.
        const { hash } = await storeAt(broker.url, { resource: mcp.resource, callback: app.callback })
        const check = (await (await fetch(`${broker.url}/hash-check?hash=${hash}`)).json()) as {
          discovery: { issuer: string; resource: string | null; notes?: string[] }
        }
        expect(check.discovery.issuer).toBe(mcp.issuer)
        const origin = new URL(mcp.resource).origin
        const sent = { 'sdk-default': `${origin}/`, 'no-prm': null, 'no-metadata': null }[shape as string]
        expect(check.discovery.resource).toBe(sent === undefined ? mcp.resource : sent)
        if (sent !== undefined)
          expect(check.discovery.notes?.[0]).toMatch(sent ? /same-origin prefix/ : /MCP 2025-03-26/)
      } finally {
        await mcp.stop()
      }
    })
  },
)

describe('an MCP server that forgets the clients it registered (a restart of the SDK demo)', () => {
  it('the first flow after it forgot already succeeds: the broker finds out and registers again', async () => {
    const mcp = await startMcpSdkServer('sdk-default')
    try {
      const first = await signIn(mcp.resource)
      expect(first.access_token).toBeTruthy()
      mcp.forgetClients()
      const registers = () => mcp.requests.filter((r) => r === 'POST /register').length
      const before = registers()
      const second = await signIn(mcp.resource)
      expect(second.error_description).toBeUndefined()
      expect(second.client_id).not.toBe(first.client_id)
      expect(registers()).toBe(before + 1)
      expect((await callWithSdkClient(mcp.resource, second.access_token!)).whoami).toBe(second.client_id)
      // And the flow after that reuses the new client, without registering again.
      const third = await signIn(mcp.resource)
      expect(third.client_id).toBe(second.client_id)
      expect(registers()).toBe(before + 1)
    } finally {
      await mcp.stop()
    }
  })
})

describe("the SDK's own example server, unmodified (simpleStreamableHttp --oauth: its authorization server apart, tokens checked by introspection)", () => {
  it.each([['--oauth'], ['--oauth', '--oauth-strict']])(
    '%s %s: resource alone gets a token its tools accept',
    async (...flags) => {
      const [mcpPort, authPort] = await Promise.all([freePort(), freePort()])
      const example = resolve(
        ROOT,
        'node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js',
      )
      const proc = spawn(process.execPath, [example, ...flags.filter(Boolean)], {
        env: { ...process.env, MCP_PORT: String(mcpPort), MCP_AUTH_PORT: String(authPort) },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      try {
        let out = ''
        proc.stdout.on('data', (d) => (out += d))
        proc.stderr.on('data', (d) => (out += d))
        await waitFor(async () => out.includes(`listening on port ${mcpPort}`), 15_000, 'the SDK example server')
        const resource = `http://localhost:${mcpPort}/mcp`
        const got = await signIn(resource)
        expect(got.error_description).toBeUndefined()
        expect(got.issuer).toBe(`http://localhost:${authPort}/`)
        const used = await callWithSdkClient(resource, got.access_token!, 'greet', { name: 'broker' })
        expect(used.tools).toContain('greet')
        expect(used.whoami).toContain('broker')
      } finally {
        proc.kill()
      }
    },
  )
})
