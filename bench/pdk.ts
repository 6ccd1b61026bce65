/**
 * Replays a fixture in process and compares it with a bare loop that calls the same plugin
 * methods on a plain object; both measured in this run, so the ratio is what matters.
 *
 *   node --import tsx bench/pdk.ts [fixture.json] [seconds]
 */
import { resolve } from 'node:path'
import { loadFixture } from '../pdk/fixture.js'
import { phaseMethod } from '../pdk/loader.js'
import { runScenario, type ScenarioResult } from '../pdk/runner/index.js'
import { preparePlugins, type RunnablePlugin } from '../pdk/runner/plugins.js'

const file = resolve(process.argv[2] ?? 'fixtures/pdk/js-hello.json')
const seconds = Number(process.argv[3] ?? 2)

const loaded = loadFixture(file)
const plugins = await preparePlugins(loaded)

/** A plain object with the same call paths as the kit, each answering what the kit answered. */
function plainKong(trace: ScenarioResult): Record<string, unknown> {
  const root: Record<string, unknown> = {}
  for (const phase of trace.phases) {
    for (const c of phase.calls) {
      const value = c.returns?.[0]
      const fn = async () => value
      for (const name of [c.call, c.call.replace(/_([a-z0-9])/g, (_, x: string) => x.toUpperCase())]) {
        let node = root
        const segs = name.split('.')
        for (const seg of segs.slice(0, -1)) node = (node[seg] ??= {}) as Record<string, unknown>
        node[segs.at(-1)!] = fn
      }
    }
  }
  return root
}

/** One pass of the bare loop: the plugins' phase methods (or script calls) on the plain object. */
async function bareOnce(
  trace: ScenarioResult,
  kong: Record<string, unknown>,
  instances: Array<Record<string, unknown> | undefined>,
): Promise<number> {
  let calls = 0
  for (const phase of trace.phases) {
    const i = plugins.findIndex((p) => p.name === phase.plugin)
    const plugin: RunnablePlugin = plugins[i]!
    if (plugin.kind === 'module') {
      try {
        await phaseMethod(instances[i]!, phase.phase)!(kong)
      } catch {
        // a plugin that throws in the fixture throws here too
      }
    } else {
      for (const c of phase.calls) {
        const segs = c.call.split('.')
        const fn = segs.reduce<unknown>((n, s) => (n as Record<string, unknown>)[s], kong) as (
          ...a: unknown[]
        ) => Promise<unknown>
        await fn(...c.args)
      }
    }
    calls += phase.calls.length
  }
  return calls
}

async function measure(
  label: string,
  once: () => Promise<number>,
): Promise<{ runs: number; calls: number; perSec: number; callsPerSec: number }> {
  const warmEnd = performance.now() + 300
  while (performance.now() < warmEnd) await once()
  let runs = 0
  let calls = 0
  const start = performance.now()
  const end = start + seconds * 1000
  while (performance.now() < end) {
    calls += await once()
    runs++
  }
  const elapsed = (performance.now() - start) / 1000
  const result = { runs, calls, perSec: runs / elapsed, callsPerSec: calls / elapsed }
  console.log(
    `${label.padEnd(28)} ${result.perSec.toFixed(0).padStart(10)} runs/s ${result.callsPerSec.toFixed(0).padStart(12)} calls/s`,
  )
  return result
}

const first = await runScenario(loaded, plugins)
if (!first.passed) console.error(`warning: ${file} does not pass; measuring anyway`)
const kong = plainKong(first)
const instances = plugins.map((p) =>
  p.kind === 'module' ? (new p.module.Plugin(structuredClone(p.config)) as Record<string, unknown>) : undefined,
)

console.log(`fixture: ${loaded.fixture.name} (${file}), ${seconds}s per measurement`)
const kit = await measure('kit (scenario replay)', async () => {
  const r = await runScenario(loaded, plugins)
  return r.phases.reduce((n, p) => n + p.calls.length, 0)
})
const bare = await measure('bare loop (plain object)', () => bareOnce(first, kong, instances))
console.log(
  `ratio bare/kit: ${(bare.perSec / kit.perSec).toFixed(1)}x runs, ${(bare.callsPerSec / kit.callsPerSec).toFixed(1)}x calls`,
)
console.log(`one replay takes ${(1e6 / kit.perSec).toFixed(1)} µs`)
