/**
 * The bare-Node baseline of `npm run bench`: node:http and ioredis doing the least each broker
 * endpoint must do, with no framework. Same worker model as `broker serve` (cluster, SCHED_NONE).
 *
 *   PORT=… REDIS_PORT=… WORKERS=… [SEAL_SECRET=…] node --import tsx bench/baseline.ts
 *
 * POST /store   parse the form body, one Redis SET … EX, answer {"hash","url"}
 * GET /start    parse the query, one Redis SET … EX (the state), answer 302 to the provider
 * GET /hash-check  parse the query, one Redis GET, answer the record as JSON
 *
 * With SEAL_SECRET, the same server also does the least that sealing at rest asks of every broker
 * (issue 14), with the broker's own Sealer (src/broker/store/seal.ts): each key is named by the
 * keyed digest of its capability (one HMAC) and each value is AES-256-GCM under the key derived
 * with it (one seal, or one open at /hash-check). This is the sealed floor: no broker that seals
 * as required can do less per request, so `broker ÷ floor` is the broker's own overhead.
 */
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import { bare, sealedKeeping } from './keeping.js'
import { benchRedis, isBenchWorker } from './cluster.js'

const port = Number(process.env.PORT)

if (isBenchWorker()) {
  const keeping = process.env.SEAL_SECRET ? sealedKeeping(process.env.SEAL_SECRET) : bare
  const redis = await benchRedis()
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body)
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    })
    res.end(text)
  }
  createServer((req, res) => {
    const q = req.url!.indexOf('?')
    const path = q === -1 ? req.url! : req.url!.slice(0, q)
    const query = new URLSearchParams(q === -1 ? '' : req.url!.slice(q + 1))
    if (req.method === 'POST' && path === '/store') {
      let raw = ''
      req.setEncoding('utf8')
      req.on('data', (d: string) => (raw += d))
      req.on('end', () => {
        const record = Object.fromEntries(new URLSearchParams(raw))
        const hash = randomBytes(24).toString('base64url')
        const [key, value] = keeping.put('flow', hash, JSON.stringify({ hash, record, progress: 'stored' }))
        redis.set(key, value, 'EX', 600).then(
          () => json(res, 200, { hash, url: `http://localhost:${port}/start?hash=${hash}` }),
          () => json(res, 503, { code: 'STORE_UNAVAILABLE' }),
        )
      })
      return
    }
    if (req.method === 'GET' && path === '/start') {
      const state = randomBytes(24).toString('base64url')
      const [key, value] = keeping.put('callback', state, query.get('hash') ?? '')
      redis.set(key, value, 'EX', 600).then(
        () => {
          res.writeHead(302, {
            location: `http://127.0.0.1:9/authorize?client_id=bench&response_type=code&state=${state}`,
            'content-length': 0,
          })
          res.end()
        },
        () => json(res, 503, { code: 'STORE_UNAVAILABLE' }),
      )
      return
    }
    if (req.method === 'GET' && path === '/hash-check') {
      const [key, read] = keeping.get('flow', query.get('hash') ?? '')
      redis.get(key).then(
        (stored) => {
          const text = stored === null ? undefined : read(stored)
          return text === undefined ? json(res, 404, { code: 'UNKNOWN_HASH' }) : json(res, 200, JSON.parse(text))
        },
        () => json(res, 503, { code: 'STORE_UNAVAILABLE' }),
      )
      return
    }
    json(res, 404, { code: 'NOT_FOUND' })
  }).listen(port, '127.0.0.1', () => process.send?.('ready'))
}
