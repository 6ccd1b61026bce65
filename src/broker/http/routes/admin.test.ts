import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { routeServers } from '../../../../test/helpers/deps.js'

const KEY = 'admin-key-0123456789'
const servers = routeServers()
const start = (key?: string) => servers(key ? { admin: { key } } : {})

const record = {
  auth_version: '2',
  auth_leg: '2',
  client_id: 'id',
  client_secret: 'top-secret-value',
  access_url: 'https://provider.example/token',
}

describe('admin API', () => {
  it('is off without admin.key', async () => {
    const { app } = await start()
    const res = await app.inject({ url: '/admin/flows', headers: { authorization: `Bearer ${KEY}` } })
    expect(res.statusCode).toBe(404)
  })

  it('refuses a missing or wrong key with 401', async () => {
    const { app } = await start(KEY)
    expect((await app.inject({ url: '/admin/flows' })).statusCode).toBe(401)
    expect((await app.inject({ url: '/admin/flows', headers: { authorization: `Bearer ${KEY}x` } })).statusCode).toBe(
      401,
    )
    expect((await app.inject({ url: '/admin/events', headers: { authorization: 'Bearer ' } })).statusCode).toBe(401)
  })

  it('lists stored flows as events, without the record or its secrets', async () => {
    const { app } = await start(KEY)
    const stored = await app.inject({ method: 'POST', url: '/store', payload: record })
    const { hash } = stored.json() as { hash: string }
    const res = await app.inject({ url: '/admin/flows', headers: { authorization: `Bearer ${KEY}` } })
    expect(res.statusCode).toBe(200)
    const { flows } = res.json() as { flows: Array<Record<string, unknown>> }
    expect(flows).toHaveLength(1)
    expect(flows[0]).toMatchObject({ type: 'stored', hash, progress: 'stored', provider: 'provider.example' })
    expect(res.body).not.toContain('top-secret-value')
  })

  it('streams flow events as server-sent events', async () => {
    const { app, broker } = await start(KEY)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }
    const res = await fetch(`http://127.0.0.1:${port}/admin/events`, { headers: { authorization: `Bearer ${KEY}` } })
    expect(res.headers.get('content-type')).toBe('text/event-stream')
    const reader = res.body!.getReader()
    await reader.read() // the opening comment
    broker.events.publish({ type: 'started', hash: 'h1', plugin: 'oauth_2_3-legged', progress: 'started' })
    let text = ''
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value)
    expect(text).toMatch(/^event: flow\ndata: \{.*"hash":"h1".*\}\n\n$/)
    await reader.cancel()
  })

  it('carries the security headers every answer does: the stream names flows by their hashes', async () => {
    const { app } = await start(KEY)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }
    const res = await fetch(`http://127.0.0.1:${port}/admin/events`, { headers: { authorization: `Bearer ${KEY}` } })
    const flows = await app.inject({ url: '/admin/flows', headers: { authorization: `Bearer ${KEY}` } })
    for (const name of [
      'cache-control',
      'x-content-type-options',
      'referrer-policy',
      'x-frame-options',
      'content-security-policy',
      'cross-origin-resource-policy',
    ])
      expect([name, res.headers.get(name)]).toEqual([name, flows.headers[name]])
    await res.body!.cancel()
  })

  it('cuts off an event stream whose client stopped reading, instead of buffering every event', async () => {
    const { app, broker } = await start(KEY)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as { port: number }
    const socket = connect(port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write(`GET /admin/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${KEY}\r\n\r\n`)
    await new Promise((resolve) => socket.once('data', resolve)) // the head and the opening comment
    socket.pause()
    const closed = new Promise((resolve) => socket.once('close', resolve))
    // 40 MB of events: far past what the kernel's socket buffers take, so the rest waits in the worker.
    const plugin = 'p'.repeat(10_000)
    for (let i = 0; i < 4000; i++)
      broker.events.publish({ type: 'started', hash: `h${i}`, plugin, progress: 'started' })
    socket.resume()
    socket.on('data', () => undefined)
    await closed
    socket.destroy()
  }, 20_000)

  it('takes the key through the shared bearer check: any scheme case, whitespace around it', async () => {
    const { app } = await start(KEY)
    for (const authorization of [`bearer ${KEY}`, `Bearer\t${KEY} `]) {
      expect((await app.inject({ url: '/admin/flows', headers: { authorization } })).statusCode, authorization).toBe(
        200,
      )
    }
    const refused = await app.inject({ url: '/admin/flows', headers: { authorization: `Bearer ${KEY.slice(0, -1)}` } })
    expect(refused.json()).toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'The admin API needs Authorization: Bearer <admin.key>.',
    })
  })
})
