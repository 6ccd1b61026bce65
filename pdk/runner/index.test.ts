import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadFixture, type Fixture } from '../fixture/index.js'
import { runScenario, type RunOptions } from './index.js'
import { preparePlugins } from './plugins.js'

const dir = mkdtempSync(join(tmpdir(), 'pdk-runner-'))
let n = 0

async function run(
  fixture: Omit<Fixture, 'name'> & { name?: string },
  files: Record<string, string> = {},
  options: RunOptions = {},
) {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  const file = join(dir, `f${n++}.json`)
  writeFileSync(file, JSON.stringify({ name: 'scenario', ...fixture }))
  const loaded = loadFixture(file)
  return runScenario(loaded, await preparePlugins(loaded), {}, options)
}

const script = (name: string, phases: Record<string, unknown[]>) => ({ name, phases }) as Fixture['plugins'][number]

describe('script calls', () => {
  it('`log` alone is the base log call, at notice severity', async () => {
    const r = await run({
      request: { url: 'http://h/' },
      plugins: [script('p', { access: [{ call: 'log', args: ['plain ', 'notice'] }] })],
    })
    expect(r.phases[0]!.calls).toEqual([{ call: 'log', args: ['plain ', 'notice'], returns: [] }])
    expect(r.logs.find((l) => l.line.includes('plain notice'))?.level).toBe('notice')
    expect(r.failures).toEqual([])
  })
})

describe('lifecycle', () => {
  it('runs http phases in order, proxying between balancer and response', async () => {
    const calls = [{ call: 'webserver.get_subsystem', returns: ['http'] }]
    const phases = Object.fromEntries(
      ['rewrite', 'access', 'balancer', 'header_filter', 'body_filter', 'log'].map((p) => [p, calls]),
    )
    const r = await run({ request: { url: 'http://h/' }, plugins: [script('p', phases)] })
    expect(r.phases.map((p) => p.phase)).toEqual([
      'rewrite',
      'access',
      'balancer',
      'header_filter',
      'body_filter',
      'log',
    ])
    expect(r.upstream_request).not.toBeNull()
    expect(r.response.source).toBe('service')
  })

  it("a router's answer skips access, sends Kong's error and runs header_filter, body_filter and log", async () => {
    const calls = [{ call: 'webserver.get_subsystem', returns: ['http'] }]
    const phases = Object.fromEntries(
      ['rewrite', 'access', 'header_filter', 'body_filter', 'log'].map((p) => [p, calls]),
    )
    const r = await run(
      { request: { url: 'http://h/x?a=1', headers: { Accept: 'text/plain' } }, plugins: [script('p', phases)] },
      {},
      { router: () => ({ status: 404, message: 'no Route matched with those values' }) },
    )
    expect(r.phases.map((p) => p.phase)).toEqual(['rewrite', 'header_filter', 'body_filter', 'log'])
    expect(r.upstream_request).toBeNull()
    expect(r.response).toMatchObject({ status: 404, source: 'exit' })
    expect(r.response.body).toContain('no Route matched with those values')
    expect(r.response.headers['content-type']).toBe('text/plain; charset=utf-8')
  })

  it('runs certificate only for https', async () => {
    const p = script('p', { certificate: [{ call: 'client.get_ip' }] })
    expect((await run({ request: { url: 'http://h/' }, plugins: [p] })).phases).toEqual([])
    expect((await run({ request: { url: 'https://h/' }, plugins: [p] })).phases.map((x) => x.phase)).toEqual([
      'certificate',
    ])
  })

  it('exit ends the phase for every plugin; header_filter, body_filter and log still run', async () => {
    const r = await run({
      request: { url: 'http://h/' },
      plugins: [
        script('first', {
          access: [
            { call: 'response.exit', args: [403, 'no'] },
            { call: 'log.info', args: ['unreached'] },
          ],
        }),
        script('second', {
          access: [{ call: 'log.info', args: ['skipped'] }],
          balancer: [{ call: 'log.info', args: ['skipped too'] }],
          header_filter: [{ call: 'response.get_source', returns: ['exit'] }],
          body_filter: [{ call: 'response.get_raw_body', returns: ['no'] }],
          log: [{ call: 'response.get_status', returns: [403] }],
        }),
      ],
    })
    expect(r.phases.map((p) => `${p.phase}:${p.plugin}`)).toEqual([
      'access:first',
      'header_filter:second',
      'body_filter:second',
      'log:second',
    ])
    expect(r.phases[0]!.calls).toHaveLength(1)
    expect(r.upstream_request).toBeNull()
    expect(r.response).toMatchObject({ status: 403, body: 'no', source: 'exit' })
    expect(r.passed).toBe(true)
  })

  it('exit in rewrite skips access', async () => {
    const r = await run({
      request: { url: 'http://h/' },
      plugins: [
        script('p', {
          rewrite: [{ call: 'response.exit', args: [204] }],
          access: [{ call: 'log.info', args: ['no'] }],
        }),
      ],
    })
    expect(r.phases.map((p) => p.phase)).toEqual(['rewrite'])
    expect(r.response.status).toBe(204)
  })

  it('a call that raises becomes a 500 with source error, the rest of the lifecycle runs', async () => {
    const r = await run({
      request: { url: 'http://h/', headers: { accept: 'text/plain' } },
      plugins: [
        script('bad', { access: [{ call: 'response.set_status', args: ['kaboom'] }] }),
        script('after', {
          access: [{ call: 'log.info', args: ['skipped'] }],
          log: [{ call: 'response.get_source', returns: ['error'] }],
        }),
      ],
      expect: { errors: ['code must be a number'] },
    })
    expect(r.response.status).toBe(500)
    expect(r.response.source).toBe('error')
    expect(r.response.body).toMatch(/^An unexpected error occurred\nrequest_id: [0-9a-f]{32}\n$/)
    expect(r.logs.some((l) => l.level === 'error' && l.line.includes('code must be a number'))).toBe(true)
    expect(r.phases.map((p) => `${p.phase}:${p.plugin}`)).toEqual(['access:bad', 'log:after'])
    expect(r.passed).toBe(true)
  })

  it('a phase failing after the answer was sent (body_filter, log) leaves it as it was: source service', async () => {
    for (const late of ['body_filter', 'log']) {
      const r = await run({
        request: { url: 'http://h/' },
        upstream: { status: 202, body: 'accepted' },
        plugins: [
          script('late', { [late]: [{ call: 'response.set_status', args: [500] }] }),
          script('reader', { log: [{ call: 'response.get_source', returns: ['service'] }] }),
        ],
        expect: { errors: ['function cannot be called in'], source: 'service', status: 202 },
      })
      expect([late, r.response.status, r.response.source, r.response.body]).toEqual([late, 202, 'service', 'accepted'])
      expect(r.logs.some((l) => l.level === 'error' && l.line.includes(`${late} phase failed`))).toBe(true)
      expect(r.failures).toEqual([])
    }
  })

  it('an unexpected throw in a script call is a plugin error too', async () => {
    const r = await run({
      request: { url: 'http://h/' },
      plugins: [script('p', { access: [{ call: 'response.exit', args: [1] }] })],
    })
    expect(r.response.status).toBe(500)
    expect(r.phases[0]!.calls[0]).toMatchObject({
      call: 'response.exit',
      throws: 'code must be a number between 100 and 599',
    })
  })

  it('stream runs preread, balancer and log', async () => {
    const r = await run({
      subsystem: 'stream',
      request: { url: 'tcp://h:9000' },
      upstream: { body: 'pong' },
      plugins: [
        script('p', {
          preread: [{ call: 'webserver.get_subsystem', returns: ['stream'] }],
          balancer: [{ call: 'service.set_target', args: ['10.0.0.1', 9001] }],
          log: [{ call: 'log.info', args: ['c'] }],
        }),
      ],
    })
    expect(r.phases.map((p) => p.phase)).toEqual(['preread', 'balancer', 'log'])
    expect(r.response.body).toBe('pong')
    expect(r.passed).toBe(true)
  })

  it("follows Kong's code: log works in preread; --strict holds the reference, which leaves it out", async () => {
    const fixture = (step: Record<string, unknown>) => ({
      subsystem: 'stream' as const,
      request: { url: 'tcp://h:9000' },
      plugins: [script('p', { preread: [{ call: 'log.info', args: ['a'], ...step }] })],
    })
    expect((await run(fixture({}))).passed).toBe(true)
    const r = await run(
      fixture({ throws: 'cannot be called in preread phase under --strict (the reference lists only: init_worker' }),
      {},
      { strict: true },
    )
    expect(r.passed).toBe(true)
  })
})

describe('script expectations', () => {
  it('reports a wrong return as expected vs actual with its fixture path', async () => {
    const r = await run({
      request: { url: 'http://example.com/' },
      plugins: [script('p', { access: [{ call: 'request.get_host', returns: ['other.com'] }] })],
    })
    expect(r.passed).toBe(false)
    expect(r.failures).toEqual([
      { path: '$.plugins[0].phases.access[0].returns', expected: ['other.com'], actual: ['example.com'] },
    ])
  })

  it('reports a missing throw and a wrong message', async () => {
    const r = await run({
      request: { url: 'http://h/' },
      plugins: [
        script('p', {
          access: [
            { call: 'request.get_host', throws: 'x' },
            { call: 'response.set_status', args: [1], throws: 'other text' },
          ],
        }),
      ],
    })
    expect(r.failures.map((f) => f.path)).toEqual([
      '$.plugins[0].phases.access[0].throws',
      '$.plugins[0].phases.access[1].throws',
    ])
  })

  it('lets trailing nils be left out and accepts camelCase and kong. names', async () => {
    const r = await run({
      request: { url: 'http://h/' },
      plugins: [
        script('p', {
          access: [
            { call: 'kong.request.getBody', returns: [null, 'missing content type'] },
            { call: 'request.get_header', args: ['none'], returns: [] },
          ],
        }),
      ],
    })
    expect(r.passed).toBe(true)
  })

  it('flags unknown kit functions', async () => {
    const r = await run({
      request: { url: 'http://h/' },
      plugins: [script('p', { access: [{ call: 'request.nope' }] })],
    })
    expect(r.failures[0]).toMatchObject({ path: '$.plugins[0].phases.access[0].call', actual: 'request.nope' })
  })

  it('marks a throw the fixture expects as expected in the trace; an unexpected one stays unmarked', async () => {
    const r = await run({
      request: { url: 'http://h/' },
      plugins: [
        script('p', {
          access: [
            { call: 'log.serialize', throws: 'function cannot be called in access phase' },
            { call: 'log.serialize' },
          ],
        }),
      ],
    })
    expect(r.phases[0]!.calls.map((c) => c.expected)).toEqual([true, undefined])
  })

  it('names the kit function a mistyped call was meant to be, as for mistyped commands', async () => {
    const r = await run({
      request: { url: 'http://h/' },
      plugins: [
        script('p', { access: [{ call: 'request.get_heder', args: ['host'] }, { call: 'kong.reqest.get_host' }] }),
      ],
    })
    expect(r.failures.map((f) => f.expected)).toEqual([
      'a kit function (did you mean request.get_header?)',
      'a kit function (did you mean request.get_host?)',
    ])
    expect(r.phases[0]!.calls[0]!.throws).toBe(
      'unknown kit function request.get_heder (did you mean request.get_header?)',
    )
  })
})

describe('expect block', () => {
  it('checks status, headers (null = absent), JSON body, source, logs and the upstream request', async () => {
    const r = await run({
      request: { url: 'http://h/p?q=1', method: 'PUT', body: { a: 1 } },
      upstream: { status: 201, headers: { 'X-Up': '1' }, body: { ok: true } },
      plugins: [script('p', { access: [{ call: 'log.warn', args: ['careful'] }] })],
      expect: {
        status: 201,
        headers: { 'x-up': '1', 'x-missing': null },
        body: { ok: true },
        source: 'service',
        logs: [{ level: 'warn', contains: 'careful' }],
        upstream_request: {
          method: 'PUT',
          path: '/p',
          query: 'q=1',
          body: { a: 1 },
          headers: { 'content-type': 'application/json' },
        },
      },
    })
    expect(r.failures).toEqual([])
  })

  it('lists each failed expectation', async () => {
    const r = await run({
      request: { url: 'http://h/' },
      plugins: [],
      expect: {
        status: 404,
        headers: { 'x-a': 'b' },
        body: 'x',
        source: 'exit',
        logs: [{ level: 'err', contains: 'nothing' }],
      },
    })
    expect(r.failures.map((f) => f.path)).toEqual([
      '$.expect.status',
      '$.expect.headers.x-a',
      '$.expect.body',
      '$.expect.source',
      '$.expect.logs[0]',
    ])
    expect(r.failures[0]).toEqual({ path: '$.expect.status', expected: 404, actual: 200 })
  })
})

describe('a verdict you can trust', () => {
  const raising = script('p', { log: [{ call: 'response.set_header', args: ['x', 'y'] }] })

  it('fails a fixture on an error it did not state, in any phase, even with no other expectation', async () => {
    const r = await run({ request: { url: 'http://h/' }, plugins: [raising] })
    expect(r.passed).toBe(false)
    expect(r.failures).toEqual([
      {
        path: '$.logs[0]',
        expected: 'no unexpected error (state it in expect.errors)',
        actual: expect.stringContaining('log phase failed: function cannot be called in log phase'),
      },
    ])
  })

  it('passes when expect.errors or an expect.logs entry at level err states the error', async () => {
    const base = { request: { url: 'http://h/' }, plugins: [raising] }
    expect((await run({ ...base, expect: { errors: ['cannot be called in log phase'] } })).passed).toBe(true)
    const viaLogs = { logs: [{ level: 'err', contains: 'cannot be called in log phase' }] }
    expect((await run({ ...base, expect: viaLogs })).passed).toBe(true)
  })

  it('fails on an [error] log line a plugin wrote, and on a stated error that never happened', async () => {
    const r = await run({
      request: { url: 'http://h/' },
      plugins: [script('p', { log: [{ call: 'log.err', args: ['disk full'] }] })],
      expect: { errors: ['never happens'] },
    })
    expect(r.failures.map((f) => f.path)).toEqual(['$.expect.errors[0]', '$.logs[0]'])
  })

  it('checks no_logs, at a level or at any level', async () => {
    const plugins = [script('p', { access: [{ call: 'log.warn', args: ['slow upstream'] }] })]
    const hit = await run({ request: { url: 'http://h/' }, plugins, expect: { no_logs: [{ contains: 'slow' }] } })
    expect(hit.failures[0]).toMatchObject({ path: '$.expect.no_logs[0]', expected: 'no such log line' })
    const other = { no_logs: [{ level: 'err', contains: 'slow' }] }
    expect((await run({ request: { url: 'http://h/' }, plugins, expect: other })).passed).toBe(true)
  })

  it('takes partial matchers in returns and expectations', async () => {
    const ok = await run({
      request: { url: 'HTTPS://H.example/a?b=1', headers: { 'X-Id': 'abc-123' } },
      plugins: [
        script('p', {
          access: [
            { call: 'request.get_start_time', returns: [{ $type: 'number' }] },
            { call: 'request.get_scheme', returns: ['https'] },
            { call: 'request.get_header', args: ['x-id'], returns: [{ $match: '^abc-\\d+$' }] },
            { call: 'request.get_headers', returns: [{ $contains: { 'x-id': 'abc-123' } }] },
            { call: 'request.get_query', returns: [{ $type: ['table'] }] },
            { call: 'response.set_header', args: ['X-Took', '17ms'] },
          ],
        }),
      ],
      expect: { status: { $type: 'number' }, headers: { 'x-took': { $match: 'ms$' } } },
    })
    expect(ok.failures).toEqual([])
    const bad = await run({
      request: { url: 'http://h/' },
      plugins: [script('p', { access: [{ call: 'request.get_host', returns: [{ $type: 'number' }] }] })],
    })
    expect(bad.failures[0]).toMatchObject({ expected: [{ $type: 'number' }], actual: ['h'] })
  })

  it('knows upstream entities: set_upstream fails softly on an unknown name', async () => {
    const r = await run({
      request: { url: 'http://h/' },
      upstreams: [{ name: 'backend' }],
      plugins: [
        script('p', {
          access: [
            { call: 'service.set_upstream', args: ['backend'], returns: [true] },
            {
              call: 'service.set_upstream',
              args: ['nope'],
              returns: [null, "could not find an Upstream named 'nope'"],
            },
          ],
        }),
      ],
    })
    expect(r.failures).toEqual([])
  })

  it('keeps an explicit empty request body: Content-Length 0 and an empty raw body', async () => {
    const r = await run({
      request: { url: 'http://h/', method: 'POST', body: '' },
      plugins: [
        script('p', {
          access: [
            { call: 'request.get_header', args: ['content-length'], returns: ['0'] },
            { call: 'request.get_raw_body', returns: [''] },
          ],
        }),
      ],
    })
    expect(r.failures).toEqual([])
  })
})

describe("a fixture's time", () => {
  it('is the clock a Lua plugin, the log and the request read; it stands still but for ngx.sleep', async () => {
    mkdirSync(join(dir, 'kong/plugins/clock'), { recursive: true })
    writeFileSync(
      join(dir, 'kong/plugins/clock/handler.lua'),
      `local C = { PRIORITY = 1, VERSION = "1" }
function C:access()
  local before = ngx.now()
  ngx.sleep(2.5)
  kong.response.set_header("x-times", table.concat({ before, ngx.now(), os.time(), ngx.time(),
    os.date("!%Y-%m-%d %H:%M:%S"), kong.request.get_start_time() }, " "))
  kong.log.notice("ticked")
  -- Kong's trace writes only while its tests run: in a replay it is there and writes nothing
  kong.log.trace("not in a replay")
end
return C`,
    )
    writeFileSync(
      join(dir, 'kong/plugins/clock/schema.lua'),
      'return { name = "clock", fields = { { config = { type = "record", fields = {} } } } }',
    )
    const r = await run({
      time: 1700000000.25,
      request: { url: 'http://h/' },
      plugins: [{ module: 'kong/plugins/clock' }],
    })
    expect(r.response.headers['x-times']).toBe(
      '1700000000.25 1700000002.75 1700000002 1700000002 2023-11-14 22:13:22 1700000000250',
    )
    // the log's timestamp is local time, as nginx writes it
    const d = new Date(1700000002750)
    const p2 = (n: number) => String(n).padStart(2, '0')
    const stamp = `${d.getFullYear()}/${p2(d.getMonth() + 1)}/${p2(d.getDate())} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())} [notice]`
    expect(r.logs.find((l) => l.line.includes('ticked'))?.line.startsWith(`${stamp} `)).toBe(true)
    expect(r.logs.some((l) => l.line.includes('not in a replay'))).toBe(false)
  })
})

describe("a Lua plugin's failure", () => {
  it("is logged in LuaJIT's words, as Kong's error.log has it", async () => {
    mkdirSync(join(dir, 'kong/plugins/oops'), { recursive: true })
    writeFileSync(
      join(dir, 'kong/plugins/oops/handler.lua'),
      'local O = { PRIORITY = 1, VERSION = "1" }\nfunction O:access() foo() end\nreturn O',
    )
    const r = await run({ request: { url: 'http://h/' }, plugins: [{ module: 'kong/plugins/oops' }] })
    expect(r.response.status).toBe(500)
    expect(r.logs.find((l) => l.level === 'error')?.line).toContain(
      "access phase failed: kong/plugins/oops/handler.lua:2: attempt to call global 'foo' (a nil value)",
    )
  })
})
