import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer, get, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBroker } from './helpers/broker.js'
import { waitFor } from './helpers/ports.js'
import { type RedisServer, startRedis } from './helpers/redis.js'

let redis: RedisServer
let slow: Server
let slowUrl = ''

beforeAll(async () => {
  redis = await startRedis()
  // A token endpoint that takes 1.5 s to answer, to keep a request in flight.
  slow = createServer((_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"access_token":"slow-token"}')
    }, 1500)
  })
  await new Promise<void>((r) => slow.listen(0, '127.0.0.1', () => r()))
  const a = slow.address()
  slowUrl = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/token`
})

afterAll(async () => {
  await redis?.stop()
  slow?.close()
})

/** GET /ping on a new connection, with a 5 s limit. */
const pingFresh = (port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path: '/ping', agent: false, timeout: 5000 }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('timeout', () => req.destroy(new Error('ping timed out')))
    req.on('error', reject)
  })

const workerPids = (primary: number): number[] =>
  execFileSync('ps', ['-o', 'pid=', '--ppid', String(primary)], { encoding: 'utf8' })
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter(Boolean)

describe('worker processes', () => {
  it('replaces a worker killed with SIGKILL while the other keeps serving', async () => {
    const broker = await startBroker({
      args: ['--store', 'redis', '--store-port', String(redis.port), '--workers', '2'],
    })
    try {
      const before = await waitFor(
        async () => (workerPids(broker.proc.pid!).length === 2 ? workerPids(broker.proc.pid!) : undefined),
        10_000,
        'two workers',
      )
      // Load on new connections while the worker dies: a request may lose its connection with the
      // killed worker, but none gets a 5xx, and the load keeps being served.
      const statuses: number[] = []
      let loading = true
      const load = Promise.all(
        Array.from({ length: 4 }, async () => {
          for (let i = 0; loading && i < 300; i++) statuses.push(await pingFresh(broker.port).catch(() => -1))
        }),
      )
      await new Promise((r) => setTimeout(r, 100))
      process.kill(before[0]!, 'SIGKILL')
      await waitFor(
        async () => /exited \(SIGKILL\); starting a new one/.test(broker.stderr()),
        10_000,
        'restart notice',
      )
      // The other worker serves meanwhile (new connections: a kept-alive socket to the killed one is gone with it).
      for (let i = 0; i < 20; i++) expect(await pingFresh(broker.port)).toBe(200)
      const after = await waitFor(
        async () => {
          const pids = workerPids(broker.proc.pid!)
          return pids.length === 2 && !pids.includes(before[0]!) ? pids : undefined
        },
        10_000,
        'a replacement worker',
      )
      expect(after).toContain(before[1])
      loading = false
      await load
      expect(statuses.filter((s) => s >= 500)).toEqual([])
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(statuses.length / 2)
    } finally {
      expect(await broker.stop()).toBe(0)
    }
  })

  it('finishes requests in flight on SIGTERM, then exits 0 and removes the pid file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-drain-'))
    const broker = await startBroker({
      args: ['--store', 'redis', '--store-port', String(redis.port), '--pid-dir', `${dir}/`],
    })
    expect(existsSync(join(dir, '.broker.pid'))).toBe(true)
    const stored = await fetch(`${broker.url}/store`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ auth_version: '2', auth_leg: '2', client_id: 'c', access_url: slowUrl }),
    })
    const { hash } = (await stored.json()) as { hash: string }
    const inFlight = fetch(`${broker.url}/start?hash=${hash}`)
    await new Promise((r) => setTimeout(r, 300))
    const exit = broker.stop('SIGTERM')
    const res = await inFlight
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ access_token: 'slow-token' })
    expect(await exit).toBe(0)
    expect(existsSync(join(dir, '.broker.pid'))).toBe(false)
  })
})
