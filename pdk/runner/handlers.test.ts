import { resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { LoadedFixture } from '../fixture/index.js'
import type { HandlerOutcome, PluginHandler, Scene, WorkerState } from '../kit/private/handler.js'
import { PluginServers } from '../plugin-server/index.js'
import { runScenario } from './index.js'
import { closePlugins, kongOrder, preparePlugins } from './plugins.js'

// The runner sees plugins only through the one handler shape: any object of that shape runs, and every
// face (a kong-js-pdk module in process or on a plugin server, a Lua plugin, a call script) loads into it.
const FIXTURES = resolve(import.meta.dirname, '../../fixtures/pdk')

const fixture = (plugins: LoadedFixture['fixture']['plugins'] = []): LoadedFixture => ({
  file: resolve(FIXTURES, 'handlers.json'),
  dir: FIXTURES,
  fixture: { name: 'handlers', request: { url: 'http://example.com/hello' }, plugins },
})

/** A handler written by hand, of no face. */
function handler(
  name: string,
  priority: number,
  phases: string[],
  run: (handler: string, scene: Scene) => HandlerOutcome,
  worker?: WorkerState,
): PluginHandler & { ran: string[] } {
  const ran: string[] = []
  return {
    index: 0,
    name,
    id: `${name}-id`,
    config: {},
    priority,
    phases: new Set(phases),
    ...(worker ? { worker } : {}),
    ran,
    run: async (h, scene) => {
      ran.push(h)
      return run(h, scene)
    },
  }
}

describe('the runner runs any plugin handler', () => {
  it('in PRIORITY order, higher first, the kit of the request in its scene', async () => {
    const low = handler('low', 1, ['access'], (_h, { kit }) => {
      ;(kit.service as { request: { add_header: (n: string, v: string) => void } }).request.add_header('X-Order', 'low')
      return {}
    })
    const high = handler('high', 10, ['access'], (_h, { kit }) => {
      ;(kit.service as { request: { add_header: (n: string, v: string) => void } }).request.add_header(
        'X-Order',
        'high',
      )
      return {}
    })
    const r = await runScenario(fixture(), [low, high])
    expect(r.phases.map((p) => p.plugin)).toEqual(['high', 'low'])
    expect(r.upstream_request?.headers['x-order']).toEqual(['high', 'low'])
  })

  it('fails the phase (a 500) on `failed`, and only logs `logged`', async () => {
    const logs = handler('logs', 2, ['access'], () => ({ logged: 'the plugin threw' }))
    const fails = handler('fails', 1, ['access'], () => ({ failed: 'boom' }))
    const r = await runScenario(fixture(), [logs, fails])
    expect(r.response.status).toBe(500)
    expect(r.phases.map((p) => [p.plugin, p.error])).toEqual([
      ['logs', 'the plugin threw'],
      ['fails', 'boom'],
    ])
    expect(r.logs.some((l) => l.level === 'error' && l.line.includes('[fails] access phase failed: boom'))).toBe(true)
  })

  it('runs a handler only in the phases it has', async () => {
    const h = handler('only-log', 0, ['log'], () => ({}))
    await runScenario(fixture(), [h])
    expect(h.ran).toEqual(['log'])
  })

  it("runs init_worker and configure once per worker, before the worker's first request", async () => {
    const worker: WorkerState = { started: false, errors: [] }
    const h = handler('w', 0, ['init_worker', 'configure', 'access'], () => ({}), worker)
    await runScenario(fixture(), [h])
    await runScenario(fixture(), [h])
    expect(h.ran).toEqual(['init_worker', 'configure', 'access', 'access'])
  })
})

describe('every face loads a plugin into the handler shape', () => {
  const servers = new PluginServers({ timeoutMs: 10_000 })
  const prepared: PluginHandler[] = []
  afterAll(async () => {
    closePlugins(prepared)
    await servers.close()
  })

  it('a Lua plugin, a kong-js-pdk module in process and on a plugin server, and a call script', async () => {
    const loaded = fixture([
      { module: './plugins/lua/kong/plugins/lua-hello/', config: { message: 'salut' } },
      { name: 'js-hello', module: './plugins/kong-style/js-hello.js', config: { message: 'hi' } },
      { name: 'js-remote', module: './plugins/kong-style/js-hello.js', plugin_server: true },
      { name: 'script', phases: { access: [{ call: 'request.get_method' }], log: [] } },
    ])
    const handlers = await preparePlugins(loaded, { servers })
    prepared.push(...handlers)
    const shape = (p: PluginHandler) => ({
      index: p.index,
      name: p.name,
      priority: p.priority,
      version: p.version,
      phases: [...p.phases].sort(),
      run: typeof p.run,
    })
    expect(handlers.map(shape)).toEqual([
      { index: 0, name: 'lua-hello', priority: 10, version: '0.1.0', phases: ['access'], run: 'function' },
      { index: 1, name: 'js-hello', priority: 0, version: '0.1.0', phases: ['access'], run: 'function' },
      { index: 2, name: 'js-remote', priority: 0, version: '0.1.0', phases: ['access'], run: 'function' },
      { index: 3, name: 'script', priority: 0, version: undefined, phases: ['access'], run: 'function' },
    ])
    expect(handlers[0]!.worker).toEqual({ started: false, errors: [] })
    expect(kongOrder(handlers).map((p) => p.name)).toEqual(['lua-hello', 'js-hello', 'js-remote', 'script'])
  })

  it('refuses a plugin_server entry when the run has no plugin servers', async () => {
    const loaded = fixture([{ name: 'r', module: './plugins/kong-style/js-hello.js', plugin_server: true }])
    await expect(preparePlugins(loaded)).rejects.toThrow('plugin_server needs the run to start plugin servers')
  })
})
