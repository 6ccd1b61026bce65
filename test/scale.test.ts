import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startCallbackApp, type CallbackApp } from './helpers/app.js'
import { type BrokerProcess, runCli, startBroker } from './helpers/broker.js'
import { Browser } from './helpers/browser.js'
import { flowSuite, storeAt } from './helpers/flow-suite.js'
import { type OAuth1Provider, startOAuth1Provider } from './helpers/oauth1-provider.js'
import { type OAuth2Provider, startOAuth2Provider } from './helpers/oauth2-provider.js'
import { freePort } from './helpers/ports.js'
import { type RedisServer, startRedis } from './helpers/redis.js'
import { type SentinelSetup, type Topology, startRedisCluster, startSentinel } from './helpers/redis-topologies.js'

const SECRETS = {
  BROKER_SESSION_SECRET: 'shared-session-secret-012345678',
}

describe('several instances on one Redis', () => {
  let redis: RedisServer
  let provider: OAuth2Provider
  let provider1: OAuth1Provider
  let app: CallbackApp
  let a: BrokerProcess
  let b: BrokerProcess
  let c: BrokerProcess

  beforeAll(async () => {
    ;[redis, provider, provider1, app] = await Promise.all([
      startRedis(),
      startOAuth2Provider(),
      startOAuth1Provider(),
      startCallbackApp(),
    ])
    // Every instance builds URLs with the same public host, as behind a load balancer; here that
    // host is instance C, so the provider calls back on C.
    const portC = await freePort()
    const args = ['--store', 'redis', '--store-port', String(redis.port), '--host', `127.0.0.1:${portC}`]
    ;[a, b, c] = await Promise.all([
      startBroker({ args, env: SECRETS }),
      startBroker({ args, env: SECRETS }),
      startBroker({ args, env: SECRETS, port: portC }),
    ])
  })

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), c?.stop()])
    await Promise.all([redis?.stop(), provider?.stop(), provider1?.stop(), app?.close()])
  })

  it('runs an OAuth 2 flow stored on A, started on B, called back on C', async () => {
    const { hash, url } = await storeAt(a.url, {
      auth_version: '2',
      auth_leg: '3',
      client_id: 'x',
      authorize_url: provider.authorizeUrl,
      access_url: provider.tokenUrl,
      callback: app.callback,
      state: 'cross',
    })
    expect(url).toContain(`127.0.0.1:${c.port}`)
    const res = await new Browser().go(`${b.url}/start?hash=${hash}`)
    expect(res.hops.map((h) => new URL(h.url).port)).toEqual([
      String(b.port),
      String(new URL(provider.issuer).port),
      String(c.port),
      String(new URL(app.url).port),
    ])
    expect(res.body).toBe('app got it')
    expect(app.received.at(-1)!.query).toMatchObject({ state: 'cross' })
    expect(app.received.at(-1)!.query.access_token).toMatch(/^ey/)
  })

  it('runs an OAuth 1.0a flow stored on B, started on A, called back on C', async () => {
    provider1.addConsumer({ key: 'cross-consumer', secret: 'cross-secret' })
    const { hash } = await storeAt(b.url, {
      auth_version: '1',
      auth_leg: '3',
      consumer_key: 'cross-consumer',
      consumer_secret: 'cross-secret',
      request_url: provider1.requestUrl,
      authorize_url: provider1.authorizeUrl,
      access_url: provider1.accessUrl,
      callback: app.callback,
      state: 'cross1',
    })
    const res = await new Browser().go(`${a.url}/start?hash=${hash}`)
    expect(res.body).toBe('app got it')
    expect(new URL(res.hops[2]!.url).port).toBe(String(c.port))
    expect(app.received.at(-1)!.query).toMatchObject({ state: 'cross1' })
    expect(app.received.at(-1)!.query.access_secret).toBeTruthy()
  })

  it('accepts a hash used on two instances at the same moment once', async () => {
    for (let round = 0; round < 10; round++) {
      const { hash } = await storeAt(a.url, {
        auth_version: '2',
        auth_leg: '3',
        client_id: 'x',
        authorize_url: provider.authorizeUrl,
        access_url: provider.tokenUrl,
      })
      const answers = await Promise.all(
        [a, b, c].map((i) => fetch(`${i.url}/start?hash=${hash}`, { redirect: 'manual' })),
      )
      const statuses = answers.map((r) => r.status).sort()
      expect(statuses).toEqual([302, 409, 409])
    }
  })

  it('redeems a one-time result code once across instances', async () => {
    const { hash } = await storeAt(a.url, {
      auth_version: '2',
      auth_leg: '2',
      client_id: 'c',
      access_url: provider.tokenUrl,
      callback: app.callback,
      delivery: 'code',
    })
    const start = await fetch(`${b.url}/start?hash=${hash}`, { redirect: 'manual' })
    const code = new URL(start.headers.get('location')!).searchParams.get('result')!
    const redeem = (i: BrokerProcess) =>
      fetch(`${i.url}/result`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ result: code }),
      })
    const statuses = (await Promise.all([redeem(a), redeem(b), redeem(c)])).map((r) => r.status).sort()
    expect(statuses).toEqual([200, 404, 404])
  })
})

describe('Redis Cluster', () => {
  let cluster: Topology
  beforeAll(async () => {
    cluster = await startRedisCluster()
  }, 60_000)
  afterAll(async () => {
    await cluster?.stop()
  })

  flowSuite('Redis Cluster of three masters', () => ({
    args: cluster.ports.flatMap((p) => ['--store-cluster', `127.0.0.1:${p}`]),
    env: SECRETS,
  }))

  it('refuses to start without shared secrets, saying so', async () => {
    const res = await runCli(
      ['serve', '--port', '0', ...cluster.ports.flatMap((p) => ['--store-cluster', `127.0.0.1:${p}`])],
      { env: { BROKER_SESSION_SECRET: '' } },
    )
    expect(res.code).toBe(2)
    expect(res.stderr).toMatch(/session\.secret must be set when several broker instances share the store/)
  })
})

describe('Redis Sentinel', () => {
  let sentinel: SentinelSetup
  let broker: BrokerProcess
  let provider: OAuth2Provider

  beforeAll(async () => {
    ;[sentinel, provider] = await Promise.all([startSentinel(), startOAuth2Provider()])
    broker = await startBroker({
      args: ['--store-sentinel', `127.0.0.1:${sentinel.sentinel}`, '--store-name', sentinel.name],
      env: SECRETS,
    })
  }, 60_000)
  afterAll(async () => {
    await broker?.stop()
    await Promise.all([sentinel?.stop(), provider?.stop()])
  }, 60_000)

  flowSuite('Redis Sentinel (one master, one replica, one sentinel)', () => ({
    args: ['--store-sentinel', `127.0.0.1:${sentinel.sentinel}`, '--store-name', sentinel.name],
    env: SECRETS,
  }))

  it('survives a failover during idle time', async () => {
    const before = await storeAt(broker.url, {
      auth_version: '2',
      auth_leg: '2',
      client_id: 'c',
      access_url: provider.tokenUrl,
    })
    const promoted = await sentinel.failover()
    expect(promoted).toBe(sentinel.replica)
    // Within a few seconds the broker follows the new master (503s meanwhile, never a hang or a 500).
    const round = async (): Promise<boolean> => {
      const res = await fetch(`${broker.url}/store`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ auth_version: '2', auth_leg: '2', client_id: 'c', access_url: provider.tokenUrl }),
      })
      if (res.status !== 200) {
        expect(res.status).toBe(503)
        return false
      }
      const { hash } = (await res.json()) as { hash: string }
      const started = await fetch(`${broker.url}/start?hash=${hash}`)
      if (started.status !== 200) expect(started.status).toBe(503)
      return started.status === 200
    }
    // Recovered: five rounds in a row succeed, within 15 s of the failover.
    let streak = 0
    for (let i = 0; i < 75 && streak < 5; i++) {
      streak = (await round()) ? streak + 1 : 0
      if (streak === 0) await new Promise((r) => setTimeout(r, 200))
    }
    expect(streak).toBe(5)
    // The flow stored before the failover was replicated and is still there.
    const check = await fetch(`${broker.url}/hash-check?hash=${before.hash}`)
    expect(check.status).toBe(200)
  })
})
