import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { kitFor } from '../pdk/runner/harness.js'
import { PluginServers, RemotePlugin } from '../pdk/plugin-server/index.js'
import { runCliInProcess } from './helpers/cli-in-process.js'
import { waitFor } from './helpers/ports.js'

// End to end: `broker pdk run` in process and with --plugin-server, from the build (`npm test` builds first).
const root = resolve(import.meta.dirname, '..')
// In this process (test/helpers/cli-in-process.ts), as a spawn would run it; the plugin servers it starts are
// child processes all the same.
const pdk = (...args: string[]) => runCliInProcess(['pdk', 'run', ...args], { cwd: root })

/** kong-js-pluginservers whose run's temp dir is gone: servers a run left behind. */
const leftServers = () =>
  readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .flatMap((p) => {
      try {
        const args = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0')
        const prefix = args[args.indexOf('-p') + 1]
        return args.some((a) => a.endsWith('kong-js-pluginserver')) && prefix && !existsSync(prefix) ? [p] : []
      } catch {
        return []
      }
    })

interface Report {
  fixtures: Array<{
    name: string
    passed: boolean
    response: { status: number; headers: Record<string, unknown>; body: string; source: string }
    upstream_request: unknown
    phases: unknown[]
    logs: Array<{ level: string; line: string }>
  }>
}

/** What must agree both ways: the pid a plugin reports and instance numbers differ by nature. */
const comparable = (r: Report['fixtures'][number]) => ({
  name: r.name,
  passed: r.passed,
  response: { ...r.response, headers: { ...r.response.headers, 'x-javascript-pid': 'pid' } },
  upstream_request: r.upstream_request,
  phases: JSON.parse(
    JSON.stringify(r.phases)
      .replace(/instance #\d+/g, 'instance #n')
      .replace(/"x-javascript-pid",\d+/g, '"x-javascript-pid","pid"'),
  ) as unknown,
  thrown: r.logs
    .filter((l) => l.line.includes('unhandled exception'))
    .map((l) => l.line.replace(/^.*\[WARN\]/, '').replace(/instance #\d+/, 'instance #n')),
})

const examples = readdirSync(join(root, 'fixtures/pdk'))
  .filter((n) => /^kong-style-.*\.json$/.test(n))
  .sort()
  .map((n) => join('fixtures/pdk', n))

const dir = mkdtempSync(join(tmpdir(), 'pdk-ps-'))
const file = (name: string, body: unknown) => {
  const path = join(dir, name)
  writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body))
  return path
}
file('package.json', '{"type":"commonjs"}')
file(
  'hang.js',
  `class P { async access(kong) { await kong.response.setHeader('x-before', '1'); await new Promise(() => {}) } }
module.exports = { Plugin: P, Version: '1.0.0', Priority: 0 }`,
)
const hanging = file('hang.json', {
  name: 'a plugin that never finishes its access phase',
  request: { url: 'http://example.com/' },
  upstream: { status: 200, body: 'proxied' },
  plugins: [{ name: 'hang', module: './hang.js' }],
  expect: { status: 200, body: 'proxied', headers: { 'x-before': '1' }, errors: ['no data'] },
})

describe('kong-style plugins in process and on the real kong-js-pluginserver', () => {
  it('has a fixture for every plugin', async () => {
    expect(examples.length).toBeGreaterThanOrEqual(7)
  })

  it('each plugin passes both ways with the same response, upstream request, trace and errors', async () => {
    const local = await pdk(...examples, '--json')
    const remote = await pdk(...examples, '--json', '--plugin-server')
    expect(local.code, local.stderr).toBe(0)
    expect(remote.code, remote.stderr).toBe(0)
    const a = (JSON.parse(local.stdout) as Report).fixtures
    const b = (JSON.parse(remote.stdout) as Report).fixtures
    expect(b.map((r) => r.name)).toEqual(a.map((r) => r.name))
    for (let i = 0; i < a.length; i++) expect(comparable(b[i]!), a[i]!.name).toEqual(comparable(a[i]!))
    // the server's own output reaches the trace
    expect(
      b.flatMap((r) => r.logs).some((l) => /\[js-hello:\d+\] \[INFO\] instance #\d+ of js-hello started/.test(l.line)),
    ).toBe(true)
  })
})

describe('broker pdk run --plugin-server', () => {
  it('gives up on a hung event after the timeout, logs it and goes on, in process and on the server alike', async () => {
    for (const extra of [[], ['--plugin-server']]) {
      const r = await pdk(hanging, '--json', '--plugin-server-timeout', '1500', ...extra)
      expect(r.code, r.stdout + r.stderr).toBe(0)
      const [report] = (JSON.parse(r.stdout) as Report).fixtures
      expect(report!.logs.some((l) => l.level === 'error' && l.line.includes('no data'))).toBe(true)
    }
  })

  it('runs a plugin on the server when its fixture says plugin_server, without the flag', async () => {
    const f = file('field.json', {
      name: 'js-hello on the plugin server by its fixture',
      request: { url: 'http://example.com/' },
      plugins: [
        {
          name: 'js-hello',
          module: join(root, 'fixtures/pdk/plugins/kong-style/js-hello.js'),
          plugin_server: true,
          config: { message: 'hej' },
        },
      ],
      expect: { headers: { 'x-hello-from-javascript': 'Javascript says hej to example.com' } },
    })
    const r = await pdk(f, '--json')
    expect(r.code, r.stdout + r.stderr).toBe(0)
    const [report] = (JSON.parse(r.stdout) as Report).fixtures
    expect(report!.logs.some((l) => /\[js-hello:\d+\] \[INFO\] instance #0 of js-hello started/.test(l.line))).toBe(
      true,
    )
    expect(report!.response.headers['x-javascript-pid']).not.toBe(String(process.pid))
  })

  it('runs any server speaking the protocol with --plugin-server-cmd', async () => {
    const bin = join(
      dirname(createRequire(import.meta.url).resolve('kong-pdk/package.json')),
      'bin/kong-js-pluginserver',
    )
    const r = await pdk(
      examples.find((e) => e.endsWith('hello.json'))!,
      '--plugin-server',
      '--plugin-server-cmd',
      `'${process.execPath}' '${bin}'`,
    )
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toContain('1 passed')
    // The shell ran the server as its child: stopping the run stopped both, leaving no server behind.
    await new Promise((done) => setTimeout(done, 1500))
    expect(leftServers()).toEqual([])
  })

  it('says so, with exit 2, when the server cannot start', async () => {
    const r = await pdk(examples[0]!, '--json', '--plugin-server', '--plugin-server-cmd', join(dir, 'no-such-server'))
    expect(r.code).toBe(2)
    const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string } }
    expect(error.code).toBe('PDK_PLUGIN_SERVER_UNAVAILABLE')
    expect(error.message).toContain('exited with status 127 before listening')
    expect(error.message).not.toContain('broker-ps-')
  })
})

describe('the Kong side of the protocol', () => {
  const servers = new PluginServers({ timeoutMs: 30_000 })
  afterAll(() => servers.close())
  const served = {
    module: join(root, 'fixtures/pdk/plugins/kong-style/js-hello.js'),
    fileName: 'js-hello',
    name: 'js-hello',
  }
  const config = JSON.stringify({ message: 'again' })

  const access = async (remote: RemotePlugin) => {
    const { ctx, kit } = kitFor({ request: { url: 'http://example.com/' } }, 'access')
    await remote.handle('access', kit, ctx, undefined)
    return ctx
  }

  it('starts the instance again when the server answers "no plugin instance"', async () => {
    const remote = new RemotePlugin(servers, served, config)
    await remote.start()
    const conn = await (await servers.server(served)).connection(5000)
    const status = (await conn.call('plugin.GetStatus', [], 5000)) as { Plugins: Record<string, unknown> }
    expect(Object.keys(status.Plugins)).toContain('js-hello')
    // the server forgets every instance, as after an expiry
    for (let iid = 0; iid < 5; iid++) await conn.call('plugin.CloseInstance', [iid], 5000).catch(() => undefined)
    const ctx = await access(remote)
    expect(ctx.logs.some((l) => l.level === 'warn' && l.line.includes('no plugin instance #'))).toBe(true)
    expect(ctx.response.headers.get('x-hello-from-javascript')).toBe('Javascript says again to example.com')
    await remote.close()
  })

  it('starts the server again when it died', async () => {
    const first = await servers.server(served)
    first.stop()
    // dead once its exit is seen (a fixed wait was too short on a busy machine)
    await waitFor(async () => first.exited !== undefined, 10_000, 'the plugin server to exit')
    const remote = new RemotePlugin(servers, served, config)
    const ctx = await access(remote)
    expect((await servers.server(served)).pid).not.toBe(first.pid)
    expect(ctx.response.headers.get('x-hello-from-javascript')).toBe('Javascript says again to example.com')
    await remote.close()
  })
})

describe('a plugin server whose broker is killed outright', () => {
  it('stops by itself: no server is left behind, orphaned, listening in a temp dir', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-orphan-'))
    const script = join(dir, 'start.mjs')
    // A process that starts a server (the build's kit, as `pdk run` does) and is then killed with SIGKILL.
    writeFileSync(
      script,
      `import { ServerProcess } from ${JSON.stringify(join(root, 'dist/pdk/plugin-server/process.js'))}
const s = await ServerProcess.start({ plugins: [], timeoutMs: 60000 })
console.log('server ' + s.pid)
setInterval(() => {}, 1000)
`,
    )
    const parent = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] })
    const pid = await new Promise<number>((done, fail) => {
      parent.stdout.on('data', (d: Buffer) => {
        const m = /server (\d+)/.exec(d.toString())
        if (m) done(Number(m[1]))
      })
      parent.on('exit', () => fail(new Error('the parent exited before its server listened')))
    })
    const alive = () => {
      try {
        // A zombie still answers kill 0: its state in /proc tells it apart.
        return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
      } catch {
        return false
      }
    }
    expect(alive()).toBe(true)
    parent.kill('SIGKILL')
    const until = Date.now() + 5000
    while (alive() && Date.now() < until) await new Promise((r) => setTimeout(r, 100))
    const left = alive()
    if (left) process.kill(pid, 'SIGKILL')
    expect(left).toBe(false)
  }, 90_000)
})
