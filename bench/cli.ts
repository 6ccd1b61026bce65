/**
 * Start-up of the built CLI as whole processes, each against a baseline run in turn with it
 * (A B A B …), so the ratio holds while the machine's speed drifts:
 *
 *   - `broker --version` against `node -e 0` (target ≤ 1.3×)
 *   - `broker pdk run fixtures/pdk/js-hello.json` against kong-pdk's own PluginTest running the same
 *     plugin once in its own process (target ≤ 0.8×)
 *
 *   npm run bench:cli [-- pairs]
 *
 * Wall time is each run's; CPU time (user + sys) is read from /proc/self/stat's reaped-children
 * counters on Linux (10 ms ticks), so it is the figure to trust on a busy machine.
 */
import { BIN, median, once } from './whole-process.js'

const pairs = Number(process.argv[2] ?? 15)

// kong-pdk's test harness, as its README shows it, running the js-hello fixture's plugin and request once.
const PLUGIN_TEST = `
const { PluginTest, Request } = require('kong-pdk/plugin_test.js')
const plugin = require('./fixtures/pdk/plugins/js-hello/index.js')
const t = new PluginTest(new Request().useURL('http://example.com/hello').useHeaders({ host: 'example.com' }))
t.Run(plugin, { message: 'bonjour' }).then(() => {
  if (t.response.headers.get('x-hello-from-javascript') !== 'Javascript says bonjour to example.com') process.exit(1)
})`

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

compare('broker --version  vs  node -e 0', [BIN, '--version'], ['-e', '0'], 1.3)
compare(
  'broker pdk run fixtures/pdk/js-hello.json  vs  kong-pdk PluginTest running js-hello once',
  [BIN, 'pdk', 'run', 'fixtures/pdk/js-hello.json'],
  ['-e', PLUGIN_TEST],
  0.8,
)
