/**
 * In-process replay of a kong-js-pdk plugin against the kong-pdk package's own PluginTest running
 * the same plugin module, measured in this run in alternating rounds, so the ratio is what
 * matters; then the same replay through the real kong-js-pluginserver. The replay is the built
 * code `broker pdk run` runs (dist/, `npm run bench:pdk` builds first), not tsx's transpilation.
 *
 *   npm run bench:pdk -- [fixture.json] [seconds per side] [rounds] [--only replay|server|lua|process|test]
 *
 * Sections: `replay` (against PluginTest), `server` (through kong-js-pluginserver), `lua` (the Lua
 * plugin's in-process replay against the JS one), `process` (whole `broker pdk run` processes of a
 * Lua and a JS fixture, bench/pdk-process.ts), `test` (whole `broker pdk test` processes of Kong's plugin
 * template and of a bundled plugin's access spec, bench/pdk-test.ts). `--only` runs one of them.
 */
import { createRequire } from 'node:module'
import { resolve } from 'node:path'
import { luaProcessComparison } from './pdk-process.js'
import { pdkTestBench } from './pdk-test.js'

const dist = resolve(import.meta.dirname, '../dist/pdk')
const { loadFixture } = (await import(`${dist}/fixture/index.js`)) as typeof import('../pdk/fixture/index.js')
const { runScenario } = (await import(`${dist}/runner/index.js`)) as typeof import('../pdk/runner/index.js')
const { preparePlugins, closePlugins } = (await import(
  `${dist}/runner/plugins.js`
)) as typeof import('../pdk/runner/plugins.js')
const { PluginServers } = (await import(
  `${dist}/plugin-server/index.js`
)) as typeof import('../pdk/plugin-server/index.js')

const argv = process.argv.slice(2)
const onlyAt = argv.indexOf('--only')
const only = onlyAt === -1 ? undefined : argv.splice(onlyAt, 2)[1]
const SECTIONS = ['replay', 'server', 'lua', 'process', 'test']
if (only !== undefined && !SECTIONS.includes(only)) {
  console.error(`--only takes one of ${SECTIONS.join(', ')}, not ${only}`)
  process.exit(2)
}
const runs = (section: string) => only === undefined || only === section
const file = resolve(argv[0] ?? 'fixtures/pdk/kong-style-hello.json')
const seconds = Number(argv[1] ?? 3)
const rounds = Number(argv[2] ?? 6)

interface Tally {
  runs: number
  ms: number
}

async function measure(once: () => Promise<unknown>, ms: number, tally: Tally): Promise<void> {
  const start = performance.now()
  const end = start + ms
  let runs = 0
  while (performance.now() < end) {
    await once()
    runs++
  }
  tally.runs += runs
  tally.ms += performance.now() - start
}

const rate = (t: Tally): number => (t.runs * 1000) / t.ms
const fmt = (label: string, t: Tally) =>
  `${label.padEnd(34)} ${rate(t).toFixed(0).padStart(8)} runs/s  ${((1000 * t.ms) / t.runs).toFixed(1).padStart(8)} µs/run`

const loaded = loadFixture(file)
const plugins = await preparePlugins(loaded)
const replay = () => runScenario(loaded, plugins)
const first = await replay()
if (!first.passed) console.error(`warning: ${file} does not pass; measuring anyway`)
let ours: Tally | undefined

/** The in-process replay against kong-pdk's PluginTest running the same plugin module. */
async function againstPluginTest(): Promise<void> {
  const spec = loaded.fixture.plugins.find((p) => p.module !== undefined && !p.module.endsWith('.lua'))
  if (!spec?.module) throw new Error(`${file} has no module plugin to compare with PluginTest`)
  const module = { path: resolve(loaded.dir, spec.module), config: spec.config ?? {} }
  // PluginTest is CommonJS and needs uuid and node-fetch (v2) beside it (devDependencies)
  const require = createRequire(import.meta.url)
  interface TestRequest {
    useURL(u: string): TestRequest
    useMethod(m: string): TestRequest
    useHeaders(h: Record<string, string>): TestRequest
    useBody(b: string): TestRequest
  }
  const { PluginTest, Request } = require('kong-pdk/plugin_test') as {
    PluginTest: new (r: TestRequest) => { Run(plugin: unknown, config: unknown): Promise<unknown> }
    Request: new () => TestRequest
  }
  const pluginModule = require(module.path) as unknown
  const req = loaded.fixture.request
  const url = new URL(req.url)
  const headers = { Host: url.host, ...((req.headers ?? {}) as Record<string, string>) }
  const pluginTestOnce = async (): Promise<void> => {
    const r = new Request()
      .useURL(req.url)
      .useMethod(req.method ?? 'GET')
      .useHeaders(headers)
    if (typeof req.body === 'string') r.useBody(req.body)
    await new PluginTest(r).Run(pluginModule, module.config)
  }

  console.log(`fixture: ${loaded.fixture.name} (${file})`)
  console.log(`${rounds} alternating rounds of ${seconds / rounds}s per side, after a warm-up`)
  await measure(replay, 500, { runs: 0, ms: 0 })
  await measure(pluginTestOnce, 500, { runs: 0, ms: 0 })
  ours = { runs: 0, ms: 0 }
  const theirs: Tally = { runs: 0, ms: 0 }
  for (let i = 0; i < rounds; i++) {
    await measure(replay, (seconds * 1000) / rounds, ours)
    await measure(pluginTestOnce, (seconds * 1000) / rounds, theirs)
  }
  console.log(fmt('in-process replay (phases enforced)', ours))
  console.log(fmt('kong-pdk PluginTest', theirs))
  console.log(`ratio replay/PluginTest: ${(rate(ours) / rate(theirs)).toFixed(2)}x`)
}

/** The same replay with the plugin on the real kong-js-pluginserver. */
async function throughPluginServer(): Promise<void> {
  const servers = new PluginServers({ timeoutMs: 10_000 })
  const remotePlugins = await preparePlugins(loaded, { all: true, servers })
  try {
    await servers.prepare()
    const remote = () => runScenario(loaded, remotePlugins, {}, { timeoutMs: 10_000 })
    const check = await remote()
    if (!check.passed) console.error(`warning: ${file} does not pass through the plugin server`)
    await measure(remote, 500, { runs: 0, ms: 0 })
    const server: Tally = { runs: 0, ms: 0 }
    await measure(remote, seconds * 1000, server)
    console.log(fmt('via kong-js-pluginserver', server))
    if (ours) console.log(`ratio plugin server/replay: ${(rate(server) / rate(ours)).toFixed(3)}x`)
  } finally {
    await servers.close()
  }
}

/**
 * A Lua plugin making the same calls as the JS hello plugin (fixtures/pdk/lua-hello.json), its
 * in-process replay against the JS one, in alternating rounds of the same run.
 */
async function luaReplay(): Promise<void> {
  const luaFile = resolve('fixtures/pdk/lua-hello.json')
  const luaLoaded = loadFixture(luaFile)
  const luaPlugins = await preparePlugins(luaLoaded)
  const jsLoaded = loadFixture(resolve('fixtures/pdk/kong-style-hello.json'))
  const jsPlugins = await preparePlugins(jsLoaded)
  const luaOnce = () => runScenario(luaLoaded, luaPlugins)
  const jsOnce = () => runScenario(jsLoaded, jsPlugins)
  if (!(await luaOnce()).passed) console.error(`warning: ${luaFile} does not pass; measuring anyway`)
  await measure(luaOnce, 500, { runs: 0, ms: 0 })
  await measure(jsOnce, 500, { runs: 0, ms: 0 })
  const lua: Tally = { runs: 0, ms: 0 }
  const js: Tally = { runs: 0, ms: 0 }
  for (let i = 0; i < rounds; i++) {
    await measure(luaOnce, (seconds * 1000) / rounds, lua)
    await measure(jsOnce, (seconds * 1000) / rounds, js)
  }
  console.log(fmt('Lua plugin replay (lua-hello)', lua))
  console.log(fmt('JS plugin replay (js-hello)', js))
  console.log(`ratio Lua/JS replay: ${(rate(lua) / rate(js)).toFixed(2)}x (target ≥ 0.5x)`)
  closePlugins(luaPlugins)
}

if (runs('replay')) await againstPluginTest()
if (runs('server')) await throughPluginServer()
if (runs('lua')) await luaReplay()
if (runs('process')) luaProcessComparison()
if (runs('test')) pdkTestBench()
