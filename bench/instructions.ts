/**
 * Instructions per request, counted by valgrind's callgrind: a measure that moves far less with the
 * machine's load than req/s and CPU time do (one build's main-thread count varied by up to 10%
 * between runs, against ±20% and more for req/s), for deciding whether a small change pays. Needs valgrind (Debian: apt-get install valgrind).
 *
 *   npm run build && node --import tsx bench/instructions.ts [--target broker|baseline|floor] [--only store|start|hash-check|flow]
 *       [--requests 3000] [--warm 30000] [--dist dist] [--top 30] [--inclusive] [--callers <function>] [--keep]
 *       [--flow-seconds 30 --warm-seconds 120 --users 10]
 *
 * --only flow: whole OAuth 2 three-legged flows (bench/flow-load.ts against the whole-flow part's token
 * endpoint and app) instead of one endpoint, counted per flow; the floor is then bench/flow-floor.ts. The
 * load runs for a time, not a count (callgrind slows the server some fifty times): warm for long enough
 * that the JIT has compiled the flow's code (a few thousand flows).
 *
 * One broker worker (or the baseline, bare — or the script BENCH_BASELINE names — or as the sealed floor, one process) runs under callgrind with instrumentation off;
 * autocannon warms it up (the JIT compiles for tens of thousands of requests), then instrumentation
 * is switched on for `--requests` requests. Prints instructions per request on the main thread (the
 * request's own work: JIT-compiled JavaScript, builtins, V8 and Node's C++, libc) and on all threads
 * (adds the background compiler and GC helpers, which depend on timing), and the functions with the
 * most instructions of their own on the main thread, JavaScript ones named through --perf-basic-prof.
 * --keep leaves callgrind's dumps and the perf map in place (for callgrind_annotate --tree=caller afterwards).
 * Kernel time (syscalls, TCP) is not counted: compare builds with this, and confirm with versus.ts.
 */
import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import { configSchema } from '../src/config/schema.js'
import { createBroker } from '../src/broker/index.js'
import { resolveSecrets } from '../src/services/serve/secrets.js'
import { freePort } from '../test/helpers/ports.js'
import { startRedis } from '../test/helpers/redis.js'
import { type Endpoint, RECORD, SECRETS, loadRun, seedFlows, startLoader, until } from './servers.js'
import { bare, sealedKeeping } from './keeping.js'
import type { FlowResult, FlowRun } from './flow-load.js'
import { startProvider } from './whole-flow.js'

const { values: opts } = parseArgs({
  options: {
    target: { type: 'string', default: 'broker' },
    only: { type: 'string', default: 'store' },
    requests: { type: 'string', default: '3000' },
    warm: { type: 'string', default: '30000' },
    dist: { type: 'string', default: 'dist' },
    top: { type: 'string', default: '30' },
    inclusive: { type: 'boolean', default: false },
    callers: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'flow-seconds': { type: 'string', default: '30' },
    'warm-seconds': { type: 'string', default: '120' },
    users: { type: 'string', default: '10' },
  },
})
const ROOT = resolve(import.meta.dirname, '..')
let N = Number(opts.requests)
const WHOLE_FLOW = opts.only === 'flow'
const ENDPOINT = (['POST /store', 'GET /start', 'GET /hash-check'] as Endpoint[]).find((e) =>
  e.endsWith(`/${opts.only}`),
)
if ((!ENDPOINT && !WHOLE_FLOW) || !['broker', 'baseline', 'floor'].includes(opts.target!)) {
  process.stderr.write('bench/instructions.ts: --target broker|baseline|floor, --only store|start|hash-check|flow\n')
  process.exit(2)
}
try {
  execFileSync('valgrind', ['--version'])
} catch {
  process.stderr.write('bench/instructions.ts: valgrind is not installed (apt-get install valgrind)\n')
  process.exit(2)
}

const say = (s: string) => process.stderr.write(`${s}\n`)
const out = mkdtempSync(join(tmpdir(), 'broker-callgrind-'))
const redis = await startRedis()
const client = new Redis({ port: redis.port })
const config = resolveSecrets(
  configSchema.parse({
    listen: '127.0.0.1',
    workers: 1,
    store: { driver: 'redis', port: redis.port, expire: 600, timeout: 10_000 },
    log: { level: 'warn' },
    session: { secret: SECRETS.session },
  }),
).config
// Flows for /start and /hash-check, stored by the broker's own /store code on the same Redis and secrets.
const seeder = await createBroker(config, 'redis', { redis: client })
const loader = await startLoader()
let proc: ChildProcess | undefined
try {
  const port = await freePort()
  const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), REDIS_PORT: String(redis.port) }
  let script: string
  const setup = { config: { ...config, port }, driver: 'redis', cwd: ROOT }
  if (opts.target === 'broker') {
    // A worker asks for its setup over the IPC channel; a build from before that (--dist of an older
    // checkout) read it from this variable instead.
    env.BROKER_WORKER_SETUP = JSON.stringify(setup)
    script = resolve(ROOT, opts.dist!, 'src/services/serve/worker-main.js')
    if (!existsSync(script)) throw new Error(`${script} is missing: npm run build first`)
  } else {
    // The baseline without its cluster primary, so that the process under callgrind is the one serving.
    env.WORKERS = '0'
    if (opts.target === 'floor') env.SEAL_SECRET = SECRETS.session
    script = join(
      ROOT,
      opts.target === 'baseline'
        ? (process.env.BENCH_BASELINE ?? 'bench/baseline.ts')
        : WHOLE_FLOW
          ? 'bench/flow-floor.ts'
          : 'bench/baseline.ts',
    )
  }
  const nodeArgs = ['--perf-basic-prof', ...(opts.target === 'broker' ? [] : ['--import', 'tsx']), script]
  proc = spawn(
    'valgrind',
    [
      '-q',
      '--tool=callgrind',
      '--instr-atstart=no',
      '--separate-threads=yes',
      `--callgrind-out-file=${out}/cg.%p`,
      process.execPath,
      ...nodeArgs,
    ],
    { env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] },
  )
  proc.on('message', (msg: { type?: string }) => {
    if (msg?.type === 'setup?') proc?.send({ type: 'setup', setup })
  })
  const url = `http://127.0.0.1:${port}`
  say(`instructions: ${opts.target} under callgrind on ${port} (starting takes a minute)`)
  await until(
    async () => (await fetch(`${url}/hash-check?hash=x`)).status === 404,
    `${opts.target} under callgrind`,
    300_000,
  )
  if (WHOLE_FLOW) await wholeFlows(url, proc.pid!)
  else await endpointRequests(url, proc.pid!, ENDPOINT!)
} finally {
  proc?.kill('SIGKILL')
  loader.stop()
  await seeder.close()
  client.disconnect()
  await redis.stop()
  if (opts.keep) say(`instructions: kept ${out} and /tmp/perf-${proc?.pid}.map`)
  else {
    rmSync(out, { recursive: true, force: true })
    if (proc?.pid) rmSync(`/tmp/perf-${proc.pid}.map`, { force: true })
  }
}

/** --only store|start|hash-check: `--requests` requests to one endpoint after `--warm` to warm up. */
async function endpointRequests(url: string, pid: number, endpoint: Endpoint): Promise<void> {
  const [hashCheck] = await seedFlows(seeder, 1)
  const text = JSON.stringify({ hash: hashCheck, record: RECORD, progress: 'stored' })
  const keeping = opts.target === 'floor' ? sealedKeeping(SECRETS.session) : bare
  await client.set(...keeping.put('flow', hashCheck!, text), 'EX', 600)
  const run = async (requests: number) => {
    const starts = endpoint === 'GET /start' ? await seedFlows(seeder, requests) : []
    const base = loadRun(endpoint, url, 10, 0, { hashCheck: hashCheck!, starts })
    return loader.run({ ...base, duration: undefined, amount: requests })
  }
  say(`instructions: warming up with ${opts.warm} requests`)
  await run(Number(opts.warm))
  execFileSync('callgrind_control', ['--instr=on', String(pid)], { stdio: 'ignore' })
  const measured = await run(N)
  execFileSync('callgrind_control', ['--dump', String(pid)], { stdio: 'ignore' })
  if (measured.bad) say(`instructions: ${measured.bad} of ${N} requests were not answered 2xx/3xx`)
  report(pid, endpoint)
}

/** --only flow: whole flows from bench/flow-load.ts, warmed for --warm-seconds, counted for --flow-seconds. */
async function wholeFlows(url: string, pid: number): Promise<void> {
  const provider = await startProvider()
  const flows = fork(join(ROOT, 'bench/flow-load.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  try {
    await new Promise<void>((r) => flows.once('message', () => r()))
    const form = new URLSearchParams({ ...RECORD, access_url: provider.token, callback: provider.app }).toString()
    const load = (seconds: number) =>
      new Promise<FlowResult>((r) => {
        flows.once('message', (m) => r(m as FlowResult))
        flows.send({ url, form, users: Number(opts.users), seconds } satisfies FlowRun)
      })
    say(`instructions: warming up with whole flows for ${opts['warm-seconds']} s`)
    const warm = await load(Number(opts['warm-seconds']))
    say(`instructions: ${warm.flows} flows to warm up`)
    execFileSync('callgrind_control', ['--instr=on', String(pid)], { stdio: 'ignore' })
    const measured = await load(Number(opts['flow-seconds']))
    execFileSync('callgrind_control', ['--dump', String(pid)], { stdio: 'ignore' })
    if (measured.bad) say(`instructions: ${measured.bad} flows failed; first: ${measured.firstError}`)
    N = measured.flows
    report(pid, 'whole flow', 'flow')
  } finally {
    flows.kill()
    provider.close()
  }
}

function report(pid: number, what: string, per = 'request'): void {
  // One dump file per thread: <prefix>-01 is the main thread.
  const files = readdirSync(out)
    .filter((f) => /-\d+$/.test(f))
    .sort()
  const total = (f: string) => Number(/^summary:\s+(\d+)/m.exec(readFileSync(join(out, f), 'utf8'))?.[1] ?? 0)
  const main = files.find((f) => f.endsWith('-01'))
  if (!main) throw new Error('callgrind wrote no dump for the main thread')
  const k = (n: number) => `${(n / N / 1000).toFixed(1)}k`
  const all = files.reduce((n, f) => n + total(f), 0)
  console.log(
    `${opts.target} ${what}: ${k(total(main))} instructions per ${per} on the main thread, ${k(all)} on all threads (${N} ${per}s)`,
  )
  const names = perfMap(`/tmp/perf-${pid}.map`)
  const annotated = execFileSync(
    'callgrind_annotate',
    [`--inclusive=${opts.inclusive ? 'yes' : 'no'}`, '--threshold=100', join(out, main)],
    {
      maxBuffer: 1 << 28,
    },
  ).toString()
  const self = new Map<string, number>()
  for (const line of annotated.split('\n')) {
    const m = /^\s*([\d,]+) \([^)]*\)\s+(.*)$/.exec(line)
    if (!m || m[2]!.startsWith('PROGRAM TOTALS')) continue
    const jit = /^\?\?\?:0x([0-9a-f]+)/.exec(m[2]!)
    const name = jit
      ? `JS ${names(parseInt(jit[1]!, 16)) ?? `0x${jit[1]}`}`
      : m[2]!.replace(/ \[[^\]]*\]$/, '').replace(/^\?\?\?:/, '')
    self.set(name, (self.get(name) ?? 0) + Number(m[1]!.replaceAll(',', '')))
  }
  console.log(`Most instructions ${opts.inclusive ? 'including callees' : 'of their own'} (main thread, per ${per}):`)
  for (const [name, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(opts.top)))
    console.log(`  ${k(n).padStart(7)}  ${name.slice(0, 140)}`)
  if (opts.callers) callersOf(opts.callers, join(out, main), names, k, per)
}

/** --callers: who calls the functions whose name contains `name`, and with how many of its instructions. */
function callersOf(
  name: string,
  dump: string,
  names: (a: number) => string | undefined,
  k: (n: number) => string,
  per: string,
) {
  const tree = execFileSync('callgrind_annotate', ['--tree=caller', '--inclusive=no', '--threshold=100', dump], {
    maxBuffer: 1 << 28,
  }).toString()
  const label = (text: string) => {
    const jit = /\?\?\?:0x([0-9a-f]+)/.exec(text)
    return jit ? `JS ${names(parseInt(jit[1]!, 16)) ?? `0x${jit[1]}`}` : text.replace(/ \[[^\]]*\]$/, '')
  }
  const byCaller = new Map<string, number>()
  let pending: Array<[string, number]> = []
  for (const line of tree.split('\n')) {
    const m = /^\s*([\d,]+) \([^)]*\)\s+([<*])\s+(.*)$/.exec(line)
    if (!m) {
      if (!line.trim()) pending = []
      continue
    }
    const n = Number(m[1]!.replaceAll(',', ''))
    if (m[2] === '<') pending.push([label(m[3]!), n])
    else {
      if (m[3]!.includes(name)) for (const [c, x] of pending) byCaller.set(c, (byCaller.get(c) ?? 0) + x)
      pending = []
    }
  }
  console.log(`Callers of ${name} (main thread, per ${per}):`)
  for (const [c, n] of [...byCaller].sort((a, b) => b[1] - a[1]).slice(0, Number(opts.top)))
    console.log(`  ${k(n).padStart(7)}  ${c.slice(0, 140)}`)
}

/** Address → JavaScript function name, from the map --perf-basic-prof writes. */
function perfMap(file: string): (address: number) => string | undefined {
  if (!existsSync(file)) return () => undefined
  const rows = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [start, size, ...name] = line.split(' ')
      return {
        start: parseInt(start!, 16),
        end: parseInt(start!, 16) + parseInt(size!, 16),
        name: name.join(' ').replace(/^(JS:|LazyCompile:)?/, ''),
      }
    })
    .sort((a, b) => a.start - b.start)
  return (address) => {
    let [lo, hi, hit] = [0, rows.length - 1, -1]
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (rows[mid]!.start <= address) [hit, lo] = [mid, mid + 1]
      else hi = mid - 1
    }
    return hit >= 0 && address < rows[hit]!.end ? rows[hit]!.name : undefined
  }
}
