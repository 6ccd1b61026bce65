import { afterEach, describe, expect, it } from 'vitest'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { type SentinelSetup, startSentinel } from './helpers/redis-topologies.js'

// Issue 33: a Sentinel failover under four concurrent /store loops. Printed: the time from the switch
// (the sentinel names the promoted replica, which says it is master) until /store answers 200 for good,
// and how many flows answered 200 are gone afterwards. store.replicaShortfall decides between the two.

const SECRETS = {
  BROKER_COOKIE_SECRET: 'cookie-secret-for-the-failover-test',
  BROKER_SESSION_SECRET: 'session-secret-for-the-failover-test',
}
const RECORD = JSON.stringify({
  auth_version: '2',
  auth_leg: '2',
  client_id: 'c',
  access_url: 'http://127.0.0.1:1/token',
})

let sentinel: SentinelSetup | undefined
let broker: BrokerProcess | undefined

afterEach(async () => {
  await broker?.stop()
  await sentinel?.stop()
}, 60_000)

/** Stores flows back to back, four at a time, until `stop()`; each answer with its time. */
function load(url: string) {
  const answers: Array<{ at: number; status: number; hash?: string }> = []
  let running = true
  const worker = async () => {
    while (running) {
      const res = await fetch(`${url}/store`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: RECORD,
      }).catch(() => undefined)
      const body = res?.status === 200 ? ((await res.json()) as { hash: string }) : undefined
      if (res && !body) await res.arrayBuffer()
      answers.push({ at: Date.now(), status: res?.status ?? 0, hash: body?.hash })
      if (!body) await new Promise((r) => setTimeout(r, 20))
    }
  }
  const workers = Array.from({ length: 4 }, worker)
  return {
    answers,
    stop: async () => {
      running = false
      await Promise.all(workers)
    },
  }
}

/** Runs the failover under load; returns the recovery time after the switch and the flows lost. */
async function failover(replicas: 1 | 2, shortfall: 'refuse' | 'accept') {
  sentinel = await startSentinel({ replicas })
  broker = await startBroker({
    args: [
      '--store-sentinel',
      `127.0.0.1:${sentinel.sentinel}`,
      '--store-name',
      sentinel.name,
      '--store-replica-shortfall',
      shortfall,
    ],
    env: SECRETS,
  })
  const traffic = load(broker.url)
  await new Promise((r) => setTimeout(r, 500))
  await sentinel.failover()
  const switched = Date.now()
  await new Promise((r) => setTimeout(r, 9_000))
  await traffic.stop()
  const after = traffic.answers.filter((a) => a.at >= switched)
  const lastBad = after.filter((a) => a.status !== 200).at(-1)
  const recovered = lastBad ? lastBad.at - switched : 0
  for (const a of traffic.answers) expect([200, 503]).toContain(a.status)
  const lost: string[] = []
  for (const { hash } of traffic.answers.filter((a) => a.hash)) {
    const res = await fetch(`${broker.url}/hash-check?hash=${hash}`)
    if (res.status !== 200) lost.push(`${hash} ${res.status}`)
    await res.arrayBuffer()
  }
  const ok = traffic.answers.filter((a) => a.status === 200).length
  console.log(
    `failover, ${replicas} replica(s), store.replicaShortfall ${shortfall}: /store ${after.at(-1)?.status === 200 ? `back ${recovered} ms after the switch (200 for good from then on)` : 'not back within 9 s of the switch'}; ${ok} flows answered 200, ${lost.length} of them lost`,
  )
  return { recovered, lost, answeredAfter: after.filter((a) => a.status === 200).length }
}

describe('a Sentinel failover under load', () => {
  // Flows answered 200 and lost are printed, not asserted (docs/operations.md has the figures). With one
  // replica and refuse, /store stays 503 until the old master has resynced (often past the watch).
  it('refuse (the default), one replica: every answer is 200 or 503 meanwhile', async () => {
    await failover(1, 'refuse')
  }, 90_000)

  it('refuse, two replicas: /store comes back', async () => {
    const { answeredAfter } = await failover(2, 'refuse')
    expect(answeredAfter).toBeGreaterThan(0)
  }, 90_000)

  it('accept, one replica: /store answers 200 again within 3 s of the switch', async () => {
    const { recovered } = await failover(1, 'accept')
    expect(recovered).toBeLessThan(3_000)
  }, 90_000)
})
