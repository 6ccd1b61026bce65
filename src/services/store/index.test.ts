import { createServer, type Server } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { storeViaBroker } from './index.js'

let server: Server | undefined
afterEach(async () => {
  await new Promise((r) => server?.close(r))
  server = undefined
})

const HASH = 'h'.repeat(32)

/** A stand-in broker answering /store (and /hash-check) as given; returns its URL and the requests it saw. */
async function fakeBroker(stored: Record<string, unknown>): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = []
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url?.split('?')[0]}`)
    req.resume().on('end', () => {
      const body =
        req.url === '/store'
          ? stored
          : {
              hash: HASH,
              plugin: 'oauth_2_2-legged',
              progress: 'stored',
              expires_in: 42,
              expires_at: '',
              created_at: '',
              record: {},
            }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    })
  })
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r))
  const { port } = server.address() as { port: number }
  return { url: `http://127.0.0.1:${port}`, seen }
}

const twoLegged = (broker: string) => ({
  broker,
  flow: 'oauth2-2',
  fields: { client_id: 'cid', client_secret: 'secret', access_url: 'https://provider.example/token' },
  notify: () => undefined,
})

describe('storeViaBroker', () => {
  it('answers from POST /store alone: plugin, seconds to live and the expiry time', async () => {
    const broker = await fakeBroker({
      hash: HASH,
      url: `http://b/start?hash=${HASH}`,
      plugin: 'oauth_2_2-legged',
      expires_in: 60,
    })
    const before = Date.now()
    const result = await storeViaBroker(twoLegged(broker.url))
    expect(broker.seen).toEqual(['POST /store'])
    expect(result).toMatchObject({
      hash: HASH,
      url: `http://b/start?hash=${HASH}`,
      plugin: 'oauth_2_2-legged',
      expires_in: 60,
    })
    const at = Date.parse(result.expires_at)
    expect(at).toBeGreaterThanOrEqual(before + 60_000)
    expect(at).toBeLessThanOrEqual(Date.now() + 60_000)
  })

  it('refuses a /store answer without the fields it reads, asking nothing more', async () => {
    const broker = await fakeBroker({ hash: HASH, url: `http://b/start?hash=${HASH}` })
    const err = await storeViaBroker(twoLegged(broker.url)).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: 'FAILED', message: expect.stringMatching(/without the hash, url, plugin/) })
    expect(broker.seen).toEqual(['POST /store'])
  })
})
