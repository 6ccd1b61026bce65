/**
 * The baseline's least work (bench/baseline.ts), served by Fastify with @fastify/formbody instead of
 * bare node:http: how much of a gap the framework itself makes, apart from what the broker does.
 *
 *   BENCH_BASELINE=bench/fastify-floor.ts npm run bench -- --workers 1
 */
import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import formbody from '@fastify/formbody'
import { benchRedis, isBenchWorker } from './cluster.js'

const port = Number(process.env.PORT)
if (isBenchWorker()) {
  const redis = await benchRedis()
  const app = Fastify()
  await app.register(formbody)
  app.post('/store', async (req) => {
    const record = req.body
    const hash = randomBytes(24).toString('base64url')
    await redis.set(`base:flow:{${hash}}`, JSON.stringify({ hash, record, progress: 'stored' }), 'EX', 600)
    return { hash, url: `http://localhost:${port}/start?hash=${hash}` }
  })
  app.get('/start', async (req, reply) => {
    const state = randomBytes(24).toString('base64url')
    await redis.set(`base:cb:{${state}}`, (req.query as { hash?: string }).hash ?? '', 'EX', 600)
    return reply.redirect(`http://127.0.0.1:9/authorize?client_id=bench&response_type=code&state=${state}`)
  })
  app.get('/hash-check', async (req, reply) => {
    const raw = await redis.get(`base:flow:{${(req.query as { hash?: string }).hash}}`)
    if (!raw) return reply.code(404).send({ code: 'UNKNOWN_HASH' })
    return JSON.parse(raw)
  })
  await app.listen({ port, host: '127.0.0.1' })
  process.send?.('ready')
}
