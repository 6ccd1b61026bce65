import { execFileSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { type SentinelSetup, startSentinel } from './helpers/redis-topologies.js'
import { waitFor } from './helpers/ports.js'

// store.replicas (issue 27 #15): a write the broker answers for is on a replica, so a Sentinel
// failover cannot forget it. A frozen replica (SIGSTOP) stands for one that has not caught up.

const SECRETS = {
  BROKER_COOKIE_SECRET: 'cookie-secret-for-the-sentinel-test',
  BROKER_SESSION_SECRET: 'session-secret-for-the-sentinel-test',
}
const RECORD = { auth_version: '2', auth_leg: '2', client_id: 'c', access_url: 'http://127.0.0.1:1/token' }

let sentinel: SentinelSetup
let broker: BrokerProcess
let replicaPid = 0

const store = (url: string) =>
  fetch(`${url}/store`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(RECORD),
  })

beforeAll(async () => {
  sentinel = await startSentinel()
  const info = execFileSync('redis-cli', ['-p', String(sentinel.replica), 'info', 'server'], { encoding: 'utf8' })
  replicaPid = Number(/process_id:(\d+)/.exec(info)?.[1])
  broker = await startBroker({
    // No store.replicas: with Sentinel and a replica it is 1. No store.replicaShortfall: the default answers a
    // short WAIT only after a switch, so a replica that lags in steady state still holds writes back.
    args: ['--store-sentinel', `127.0.0.1:${sentinel.sentinel}`, '--store-name', sentinel.name],
    env: SECRETS,
  })
}, 60_000)

afterAll(async () => {
  if (replicaPid) process.kill(replicaPid, 'SIGCONT')
  await broker?.stop()
  await sentinel?.stop()
}, 60_000)

describe('store.replicas with Sentinel', () => {
  it('answers a write only once the replica has it: 503 while the replica lags, 200 again once it is back', async () => {
    expect((await store(broker.url)).status).toBe(200)
    process.kill(replicaPid, 'SIGSTOP')
    try {
      const lagging = await store(broker.url)
      expect(lagging.status).toBe(503)
      expect(await lagging.json()).toMatchObject({
        code: 'STORE_UNAVAILABLE',
        message: expect.stringMatching(/replica/),
      })
    } finally {
      process.kill(replicaPid, 'SIGCONT')
    }
    await waitFor(async () => (await store(broker.url)).status === 200, 10_000, 'a write acknowledged again')
  })

  it('a flow answered for survives a failover', async () => {
    const res = await store(broker.url)
    expect(res.status).toBe(200)
    const { hash } = (await res.json()) as { hash: string }
    await sentinel.failover()
    await waitFor(
      async () => (await fetch(`${broker.url}/hash-check?hash=${hash}`)).status === 200,
      20_000,
      'the flow on the promoted master',
    )
  })
})
