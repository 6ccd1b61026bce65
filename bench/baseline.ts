/**
 * The bare-Node baseline of `npm run bench`: node:http and ioredis doing the least each broker
 * endpoint must do, with no framework. Same worker model as `broker serve` (cluster, SCHED_NONE).
 *
 *   PORT=… REDIS_PORT=… WORKERS=… node --import tsx bench/baseline.ts
 *
 * POST /store   parse the form body, one Redis SET … EX, answer {"hash","url"}
 * GET /start    parse the query, one Redis SET … EX (the state), answer 302 to the provider
 * GET /hash-check  parse the query, one Redis GET, answer the record as JSON
 */
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import { Redis } from 'ioredis'
import { isBenchWorker } from './cluster.js'

const port = Number(process.env.PORT)

if (isBenchWorker()) {
  const redis = new Redis({
    port: Number(process.env.REDIS_PORT),
    host: '127.0.0.1',
    enableOfflineQueue: false,
    lazyConnect: true,
  })
  await redis.connect()
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
        redis.set(`base:flow:{${hash}}`, JSON.stringify({ hash, record, progress: 'stored' }), 'EX', 600).then(
          () => json(res, 200, { hash, url: `http://localhost:${port}/start?hash=${hash}` }),
          () => json(res, 503, { code: 'STORE_UNAVAILABLE' }),
        )
      })
      return
    }
    if (req.method === 'GET' && path === '/start') {
      const state = randomBytes(24).toString('base64url')
      redis.set(`base:cb:{${state}}`, query.get('hash') ?? '', 'EX', 600).then(
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
      redis.get(`base:flow:{${query.get('hash')}}`).then(
        (raw) => (raw ? json(res, 200, JSON.parse(raw)) : json(res, 404, { code: 'UNKNOWN_HASH' })),
        () => json(res, 503, { code: 'STORE_UNAVAILABLE' }),
      )
      return
    }
    json(res, 404, { code: 'NOT_FOUND' })
  }).listen(port, '127.0.0.1', () => process.send?.('ready'))
}
