import { createServer, type Server } from 'node:http'
import type { Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { compilePolicy } from './policy.js'
import { outboundRequest } from './request.js'

let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined))
  server = undefined
})

describe('kept-alive connections to providers', () => {
  it('are closed by the broker once idle, as the keep-alive hint allows, even when the provider never closes them', async () => {
    const sockets: Socket[] = []
    server = createServer((_req, res) => {
      // Announces 2 s, keeps the connection far longer itself: only the broker's side can close it.
      res.writeHead(200, { 'content-type': 'application/json', 'keep-alive': 'timeout=2' })
      res.end('{}')
    })
    server.keepAliveTimeout = 60_000
    server.on('connection', (s: Socket) => sockets.push(s))
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    const policy = compilePolicy({ listen: '127.0.0.1', providers: {} })
    const answer = await outboundRequest(policy, new URL(`http://127.0.0.1:${port}/token`), {}, 5_000)
    expect(answer.status).toBe(200)
    expect(sockets).toHaveLength(1)
    const started = Date.now()
    await new Promise((resolve, reject) => {
      sockets[0]!.once('close', resolve)
      setTimeout(() => reject(new Error('the idle connection was still open after 5 s')), 5_000).unref()
    })
    // timeout=2 → closed by Node's agent at 1 s idle.
    expect(Date.now() - started).toBeLessThan(4_000)
  }, 10_000)
})
