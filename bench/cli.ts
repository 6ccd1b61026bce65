/**
 * Start-up of the built CLI as whole processes, each against a baseline run in turn with it
 * (A B A B …), so the ratio holds while the machine's speed drifts:
 *
 *   - `broker --version` against `node -e 0` (target ≤ 2.5×)
 *   - `broker pdk run fixtures/pdk/js-hello.json` against kong-pdk's own PluginTest running the same
 *     plugin once in its own process (target ≤ 0.8×)
 *
 *   npm run bench:cli [-- pairs]
 *
 * Wall time is each run's; CPU time (user + sys) is read from /proc/self/stat's reaped-children
 * counters on Linux (10 ms ticks), so it is the figure to trust on a busy machine.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'

const ROOT = resolve(import.meta.dirname, '..')
const BIN = resolve(ROOT, 'bin', 'run.js')
const pairs = Number(process.argv[2] ?? 15)

// kong-pdk's test harness, as its README shows it, running the js-hello fixture's plugin and request once.
const PLUGIN_TEST = `
const { PluginTest, Request } = require('kong-pdk/plugin_test.js')
const plugin = require('./fixtures/pdk/plugins/js-hello/index.js')
const t = new PluginTest(new Request().useURL('http://example.com/hello').useHeaders({ host: 'example.com' }))
t.Run(plugin, { message: 'bonjour' }).then(() => {
  if (t.response.headers.get('x-hello-from-javascript') !== 'Javascript says bonjour to example.com') process.exit(1)
})`

/** Reaped children's user + sys seconds so far (Linux), else undefined. */
function childrenCpu(): number | undefined {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')
    // After "pid (comm) ": state is field 3, cutime 16 and cstime 17 (1-based), in clock ticks.
    return (Number(fields[13]) + Number(fields[14])) / 100
  } catch {
    return undefined
  }
}

interface Sample {
  wall: number
  cpu?: number
}

function once(args: string[]): Sample {
  const cpu0 = childrenCpu()
  const t0 = performance.now()
  const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })
  const wall = (performance.now() - t0) / 1000
  const cpu1 = childrenCpu()
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}:\n${r.stderr}`)
  return { wall, cpu: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0 }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const fmt = (x: number) => x.toFixed(2)

/** A and B in turn, one warm-up each, then `pairs` counted pairs; ratios are taken pair by pair. */
function compare(label: string, a: string[], b: string[], target: number): void {
  once(a)
  once(b)
  const wall: number[] = []
  const cpu: number[] = []
  const aWall: number[] = []
  const bWall: number[] = []
  for (let i = 0; i < pairs; i++) {
    const x = once(a)
    const y = once(b)
    aWall.push(x.wall)
    bWall.push(y.wall)
    wall.push(x.wall / y.wall)
    if (x.cpu !== undefined && y.cpu !== undefined && y.cpu > 0) cpu.push(x.cpu / y.cpu)
  }
  const range = (xs: number[]) => `${fmt(median(xs))}× (${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})`
  console.log(label)
  console.log(`  wall  A ${fmt(median(aWall))} s, B ${fmt(median(bWall))} s; A/B ${range(wall)}`)
  if (cpu.length) console.log(`  cpu   A/B ${range(cpu)}`)
  const verdict = median(cpu.length ? cpu : wall) <= target ? 'met' : 'missed'
  console.log(`  target ≤ ${target}×: ${verdict} (median ${cpu.length ? 'cpu' : 'wall'} ratio, ${pairs} pairs)`)
}

compare('broker --version  vs  node -e 0', [BIN, '--version'], ['-e', '0'], 2.5)
compare(
  'broker pdk run fixtures/pdk/js-hello.json  vs  kong-pdk PluginTest running js-hello once',
  [BIN, 'pdk', 'run', 'fixtures/pdk/js-hello.json'],
  ['-e', PLUGIN_TEST],
  0.8,
)
