import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BrokerProcess, startBroker } from './helpers/broker.js'
import { spawnCli } from './helpers/cli.js'
import { decideDevice, type DpopProvider, startDpopProvider } from './helpers/dpop-provider.js'
import { freePort } from './helpers/ports.js'

// `broker store --flow device` as a user runs it, against `broker serve` and oidc-provider's device
// flow (an interval of 0.3 s: the CLI polls as often as the broker allows, rounded up to 1 s).
let broker: BrokerProcess
let op: DpopProvider

beforeAll(async () => {
  const [brokerPort, opPort] = await Promise.all([freePort(), freePort()])
  op = await startDpopProvider(opPort, `http://localhost:${brokerPort}/callback`)
  op.device.interval = 0.3
  broker = await startBroker({ port: brokerPort, args: ['--store', 'memory'] })
}, 30_000)

afterAll(async () => {
  await broker?.stop()
  await op?.stop()
})

const deviceArgs = (...more: string[]) => [
  'store',
  '--flow',
  'device',
  '--broker',
  broker.url,
  '--issuer',
  op.issuer,
  '--client-id',
  'device-public',
  '--client-auth',
  'none',
  '--no-open',
  ...more,
]

describe('broker store --flow device', () => {
  it('prints the user code and where to enter it, waits, and prints the tokens (--json)', async () => {
    const run = spawnCli(deviceArgs('--scope', 'openid', '--json'))
    const [, complete] = await run.waitFor(/or open (\S+)/)
    expect(run.stderr()).toMatch(/Enter the code \w{4}-\w{4} at http:\/\/127\.0\.0\.1:\d+\/device/)
    await decideDevice(complete!)
    const { code, stdout, stderr } = await run.exited
    expect(code, stderr).toBe(0)
    const out = JSON.parse(stdout) as {
      plugin: string
      user_code: string
      captured: { delivery: string; result: Record<string, unknown> }
    }
    expect(out.plugin).toBe('oauth_device_2')
    expect(out.captured.delivery).toBe('poll')
    expect(out.captured.result.access_token).toBeTruthy()
    expect(out.captured.result.id_token_verified).toBe(true)
  }, 60_000)

  it('says the user refused, with exit 1 and no token', async () => {
    const run = spawnCli(deviceArgs())
    const [, complete] = await run.waitFor(/or open (\S+)/)
    await decideDevice(complete!, true)
    const { code, stdout, stderr } = await run.exited
    expect(code).toBe(1)
    expect(stderr).toMatch(/access_denied|aborted/i)
    expect(stdout).not.toContain('access_token')
  }, 60_000)
})
