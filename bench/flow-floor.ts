/**
 * The sealed floor of a whole OAuth 2 three-legged flow (the whole-flow part of `npm run bench`): bare
 * node:http and ioredis doing, per step, what any broker that seals what it keeps and runs each
 * callback exactly once must at least do. Same worker model as `broker serve` (bench/cluster.ts).
 *
 *   PORT=… REDIS_PORT=… WORKERS=… SEAL_SECRET=… node --import tsx bench/flow-floor.ts
 *
 * POST /store     the form parsed; one HMAC names the key (the broker's Sealer), one AES-256-GCM seal, SET NX EX
 * GET /start      the flow read and deleted (GETDEL) and opened; a state, a PKCE pair and a cookie nonce;
 *                 the flow sealed again under the state (SET NX EX); 302 to the provider with a cookie
 * GET /callback   the flow read and opened; the cookie compared (timingSafeEqual); a claim (SET NX PX, the
 *                 exchange's lease); the token POST (kept-alive node:http); the flow marked completed
 *                 (SET XX EX, sealed); 302 to the app with the token in the query
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { Agent, type IncomingMessage, type ServerResponse, createServer, request } from 'node:http'
import { Sealer } from '../src/broker/store/seal.js'
import { randomPool } from '../flows/lib/random.js'
import { benchRedis, isBenchWorker } from './cluster.js'

const port = Number(process.env.PORT)
const PREFIX = 'flowfloor:'
const EXPIRE = 600
const LEASE_MS = 30_000

interface Flow {
  hash: string
  record: Record<string, string>
  progress: 'stored' | 'awaiting_callback' | 'exchanging' | 'completed'
  state?: string
  verifier?: string
  nonce?: string
  token?: unknown
}

if (isBenchWorker()) {
  const sealer = new Sealer([process.env.SEAL_SECRET!])
  const redis = await benchRedis()
  const agent = new Agent({ keepAlive: true })
  // Random bytes from the broker's own pool (flows/lib/random.ts): the least a CSPRNG value costs.
  const random = () => randomPool(32).toString('base64url')

  /** A capability's key and how to seal and open the flow kept there. */
  const keep = (kind: 'flow' | 'callback', capability: string) => {
    const sealing = sealer.derive(kind, capability)
    const key = `${PREFIX}${kind}:{${sealing.name}}`
    return {
      key,
      seal: (flow: Flow) => sealer.seal(sealing, key, JSON.stringify(flow)),
      open: (stored: string | null): Flow | undefined => {
        const text = stored === null ? undefined : sealer.open(sealing, key, stored)
        return text === undefined ? undefined : (JSON.parse(text) as Flow)
      },
    }
  }
  const answer = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body)
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    })
    res.end(text)
  }
  const redirect = (res: ServerResponse, location: string, cookie?: string) => {
    res.writeHead(302, { location, 'content-length': 0, ...(cookie ? { 'set-cookie': cookie } : {}) })
    res.end()
  }
  const readBody = (req: IncomingMessage) =>
    new Promise<string>((resolve, reject) => {
      let raw = ''
      req.setEncoding('utf8')
      req.on('data', (d: string) => (raw += d))
      req.on('end', () => resolve(raw))
      req.on('error', reject)
    })
  const tokenPost = (url: string, form: string) =>
    new Promise<unknown>((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(form) },
      })
      req.on('error', reject)
      req.on('response', (res) => {
        readBody(res).then(
          (text) => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(text))),
          reject,
        )
      })
      req.end(form)
    })

  const store = async (req: IncomingMessage, res: ServerResponse) => {
    const record = Object.fromEntries(new URLSearchParams(await readBody(req)))
    const hash = random()
    const flow = keep('flow', hash)
    const ok = await redis.set(flow.key, flow.seal({ hash, record, progress: 'stored' }), 'EX', EXPIRE, 'NX')
    if (ok !== 'OK') return answer(res, 409, { code: 'HASH_TAKEN' })
    answer(res, 200, { hash, url: `http://127.0.0.1:${port}/start?hash=${hash}` })
  }

  const start = async (query: URLSearchParams, res: ServerResponse) => {
    const stored = keep('flow', query.get('hash') ?? '')
    const flow = stored.open(await redis.getdel(stored.key))
    if (!flow || flow.progress !== 'stored') return answer(res, 404, { code: 'UNKNOWN_HASH' })
    const state = random()
    const verifier = random()
    const nonce = random()
    const challenge = createHash('sha256').update(verifier).digest('base64url')
    const next = keep('callback', state)
    const ok = await redis.set(
      next.key,
      next.seal({ ...flow, state, verifier, nonce, progress: 'awaiting_callback' }),
      'EX',
      EXPIRE,
      'NX',
    )
    if (ok !== 'OK') return answer(res, 409, { code: 'STATE_TAKEN' })
    const to = new URL(flow.record.authorize_url!)
    to.search = new URLSearchParams({
      response_type: 'code',
      client_id: flow.record.client_id!,
      redirect_uri: `http://127.0.0.1:${port}/callback`,
      scope: flow.record.scope ?? '',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString()
    redirect(res, to.href, `floor_${state.slice(0, 12)}=${nonce}; Path=/callback; HttpOnly; SameSite=Lax`)
  }

  const callback = async (query: URLSearchParams, req: IncomingMessage, res: ServerResponse) => {
    const state = query.get('state') ?? ''
    const kept = keep('callback', state)
    const flow = kept.open(await redis.get(kept.key))
    if (!flow || flow.progress !== 'awaiting_callback') return answer(res, 404, { code: 'UNKNOWN_STATE' })
    const cookie = /(?:^|;\s*)floor_[^=]+=([^;]*)/.exec(req.headers.cookie ?? '')?.[1] ?? ''
    const [got, want] = [Buffer.from(cookie), Buffer.from(flow.nonce!)]
    if (got.length !== want.length || !timingSafeEqual(got, want)) return answer(res, 403, { code: 'NOT_BOUND' })
    // Exactly once: the first callback claims the exchange for a lease; another one finds it taken.
    if ((await redis.set(`${kept.key}:claim`, '1', 'PX', LEASE_MS, 'NX')) !== 'OK')
      return answer(res, 409, { code: 'ALREADY_CLAIMED' })
    const { record } = flow
    const token = (await tokenPost(
      record.access_url!,
      new URLSearchParams({
        grant_type: 'authorization_code',
        code: query.get('code') ?? '',
        redirect_uri: `http://127.0.0.1:${port}/callback`,
        code_verifier: flow.verifier!,
        client_id: record.client_id!,
        client_secret: record.client_secret!,
      }).toString(),
    )) as Record<string, string | number>
    await redis.set(kept.key, kept.seal({ ...flow, token, progress: 'completed' }), 'EX', EXPIRE, 'XX')
    const to = new URL(record.callback!)
    for (const [k, v] of Object.entries(token)) to.searchParams.set(k, String(v))
    if (record.state) to.searchParams.set('state', record.state)
    redirect(res, to.href)
  }

  createServer((req, res) => {
    const q = req.url!.indexOf('?')
    const path = q === -1 ? req.url! : req.url!.slice(0, q)
    const query = new URLSearchParams(q === -1 ? '' : req.url!.slice(q + 1))
    const failed = () => answer(res, 503, { code: 'FAILED' })
    if (req.method === 'POST' && path === '/store') return void store(req, res).catch(failed)
    if (req.method === 'GET' && path === '/start') return void start(query, res).catch(failed)
    if (req.method === 'GET' && path === '/callback') return void callback(query, req, res).catch(failed)
    if (path === '/ping') return answer(res, 200, { ok: true })
    answer(res, 404, { code: 'NOT_FOUND' })
  }).listen(port, '127.0.0.1', () => process.send?.('ready'))
}
