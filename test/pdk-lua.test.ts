import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from './helpers/broker.js'
import { runCliInProcess } from './helpers/cli-in-process.js'

// End to end: Kong Lua plugins of our own (fixtures/pdk/plugins/lua) run unchanged by
// `broker pdk run`, from the build (`npm test` builds first).
const root = resolve(import.meta.dirname, '..')
// In this process (test/helpers/cli-in-process.ts): exit codes and output as a spawn gives them, without
// starting Node and oclif once per run.
const pdk = (...args: string[]) => runCliInProcess(['pdk', 'run', ...args], { cwd: root })
const json = async (...args: string[]) => {
  const r = await pdk(...args, '--json')
  return { code: r.code, out: JSON.parse(r.stdout) as Record<string, unknown>, stderr: r.stderr }
}
const bad = (name: string) => `fixtures/pdk/lua/bad/${name}.json`

describe('broker pdk run with Lua plugins', () => {
  it('passes every Lua fixture (header, body, chunks, db, cjson, ngx.re, binary)', async () => {
    const shipped = readdirSync(join(root, 'fixtures/pdk/lua')).filter((f) => f.endsWith('.json')).length
    const r = await pdk('fixtures/pdk/lua')
    expect(r.stderr).toBe('')
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(`${shipped} passed, 0 failed`)
    expect(r.code).toBe(0)
  })

  it('runs plugins by PRIORITY whatever the fixture order (key-auth 1250 before acl 950)', async () => {
    const { out } = await json('fixtures/pdk/lua/key-auth-acl-allowed.json')
    const fixture = (out as unknown as { fixtures: Array<{ phases: Array<{ plugin: string }> }> }).fixtures[0]!
    expect(fixture.phases.map((p) => p.plugin)).toEqual(['lua-key-auth', 'lua-acl'])
  })

  it('traces the Lua calls of the same kit, with Lua values', async () => {
    const r = await pdk('fixtures/pdk/lua-hello.json')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('request.get_header("host") → "example.com"')
    expect(r.stdout).toContain('x-hello-from-lua: Lua says bonjour to example.com')
  })

  it('traces the writes a plugin makes through ngx.req, ngx.var, ngx.header and ngx.status', async () => {
    const r = await pdk('fixtures/pdk/lua/ngx-writes.json')
    expect(r.code).toBe(0)
    for (const line of [
      'ngx.req.set_header("X-Added", "yes") → nothing',
      'ngx.req.clear_header("X-Drop") → nothing',
      'ngx.req.set_method("PUT") → nothing',
      'ngx.req.set_body_data("replaced body") → nothing',
      'ngx.req.set_uri_args("page=2") → nothing',
      'ngx.req.set_uri("/internal") → nothing',
      'ngx.var.upstream_uri = "/v2/items"',
      'ngx.header.X-Served-By = "lua"',
      'ngx.header.Server = nil',
      'ngx.status = 203',
    ])
      expect(r.stdout).toContain(`    ${line}\n`)
    const { out } = await json('fixtures/pdk/lua/args-cleared.json')
    const calls = (out as unknown as { fixtures: Array<{ phases: Array<{ calls: unknown[] }> }> }).fixtures[0]!
      .phases[0]!.calls
    expect(calls).toContainEqual({ call: 'ngx.var.args', args: [null], returns: [] })
  })

  it("shows the entry a logger queued in the trace, built from Kong's ngx.ctx and nginx's variables", async () => {
    const { out } = await json('fixtures/pdk/lua/queue-log.json')
    const calls = (
      out as unknown as { fixtures: Array<{ phases: Array<{ calls: Array<{ call: string; args: unknown[] }> }> }> }
    ).fixtures[0]!.phases.flatMap((p) => p.calls)
    const queued = calls.find((c) => c.call === 'kong.tools.queue.enqueue')
    expect(queued?.args[0]).toBe('lua-queue-log')
    expect(JSON.parse(String(queued?.args[1]))).toEqual({
      request_size: 44,
      service: 'orders',
      uri: '/orders?x=1',
      status: 201,
      tries: 1,
    })
  })

  it("names the plugin's file and line in the log line of a failed phase, as Kong's does", async () => {
    const { out } = await json('fixtures/pdk/lua/ngx-set-uri-jump.json')
    const logs = (out as unknown as { fixtures: Array<{ logs: Array<{ line: string }> }> }).fixtures[0]!.logs
    expect(logs[0]!.line).toContain('[gateway] handler.lua:7 [lua-ngx-writes] access phase failed: ngx.req.set_uri')
  })

  it("refuses a config the schema refuses, exit 2, naming the field with Kong's message", async () => {
    const r = await json(bad('refused-config'))
    expect(r.code).toBe(2)
    expect(r.out).toMatchObject({ error: { code: 'PDK_PLUGIN_CONFIG_INVALID' } })
    expect(JSON.stringify(r.out)).toContain('$.plugins[0].config.limit: value should be between 1 and 100')
    expect((await json(bad('unknown-field'))).out).toMatchObject({ error: { code: 'PDK_PLUGIN_CONFIG_INVALID' } })
    // the plugin entity's own checks (a conditional on config.policy) name the field from the config
    const conditional = await json(bad('redis-without-host'))
    expect(conditional.code).toBe(2)
    expect(JSON.stringify(conditional.out)).toContain('$.plugins[0].config.redis_host: required field missing')
    // Kong's entity checks and field validators, every error at once; a check Kong does not have is named
    const checks = await pdk(bad('entity-checks'))
    expect(checks.code).toBe(2)
    for (const part of [
      "$.plugins[0].config: values of these fields must be distinct: 'primary', 'secondary'",
      "entity check 'frobnicate' is not emulated by broker",
      '$.plugins[0].config.legacy: must not be one of: none',
      '$.plugins[0].config.scopes: expected to contain: openid',
    ])
      expect(checks.stderr.replace(/\s+/g, ' ')).toContain(part)
    expect((await pdk(bad('entity-checks-conditional'))).stderr.replace(/\s+/g, ' ')).toContain(
      "only one or none of these fields must be set: 'primary', 'legacy'; an oidc primary needs 'scopes'",
    )
    expect((await pdk(bad('entity-checks-custom'))).stderr).toContain('$.plugins[0].config: primary must not be root')
  })

  it('names every field a config gets wrong at once, a misspelt one with the closest field of its record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pdk-lua-config-'))
    const file = join(dir, 'typos.json')
    writeFileSync(
      file,
      JSON.stringify({
        name: 'two config mistakes',
        request: { url: 'http://api.test/' },
        plugins: [
          {
            module: join(root, 'fixtures/pdk/plugins/lua/kong/plugins/lua-rewrite/'),
            config: { limt: 5, mode: 'lenient', stamp: { valeu: 'x' } },
          },
        ],
      }),
    )
    const r = await pdk(file)
    expect(r.code).toBe(2)
    expect(r.stderr.split('\n').slice(0, 3)).toEqual([
      `Error PDK_PLUGIN_CONFIG_INVALID: ${file}: $.plugins[0].config.limt: unknown field (did you mean limit?)`,
      `${file}: $.plugins[0].config.mode: expected one of: strict, loose`,
      `${file}: $.plugins[0].config.stamp.valeu: unknown field (did you mean value?)`,
    ])
  })

  it('stops with LUA_SYNTAX_LUAJIT, naming the file, the line and the construct, for a LuaJIT-only literal', async () => {
    const r = await pdk(bad('luajit-only'))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(
      "LUA_SYNTAX_LUAJIT: fixtures/pdk/lua/bad/luajit-only.json: $.plugins[0].module: does not parse: kong/plugins/lua-luajit-only/handler.lua:4: malformed number near '12i' (LuaJIT's imaginary number literal; Lua 5.4, which broker runs, has none)",
    )
    expect(r.stderr).not.toContain('FIXTURE_INVALID')
  })

  it("stops with LUA_SYNTAX for a library that does not parse, with a hint about the library, not the plugin's code", async () => {
    const r = await pdk(bad('syntax-in-library'))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(
      "Error LUA_SYNTAX: fixtures/pdk/lua/bad/syntax-in-library.json: $.plugins[0].module: does not parse: broken_lib.lua:4: unexpected symbol near ')' (a library's file, required by kong.plugins.lua-old-library.handler)",
    )
    expect(r.stderr).toContain('a version of that library that parses')
    expect(r.stderr).not.toContain('Fix the Lua at the file and line')
  })

  it('runs every fixture past one that cannot run, reports each stopped one, and exits 2 at the end', async () => {
    const r = await pdk(bad('needs-x509'), 'fixtures/pdk/lua-hello.json', bad('luajit-only'))
    expect(r.code).toBe(2)
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('1 passed, 0 failed')
    expect(r.stderr).toContain('Error LUA_MODULE_UNSUPPORTED: fixtures/pdk/lua/bad/needs-x509.json')
    expect(r.stderr).toContain('LUA_SYNTAX_LUAJIT: fixtures/pdk/lua/bad/luajit-only.json')
  })

  it("stops, exit 2, at a call of nginx's sockets, without proposing a module on lua_path in their place", async () => {
    const r = await pdk(bad('needs-socket'))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(
      'Error LUA_MODULE_UNSUPPORTED: fixtures/pdk/lua/bad/needs-socket.json: $.plugins[0].module: calls ngx.socket.tcp() of "ngx.socket", which broker does not emulate',
    )
    expect(r.stderr).toContain('no module on lua_path can stand in for')
    expect(r.stderr).not.toContain('Put a module of your own')
  })

  it('fails at once, exit 2, when a plugin requires a module broker does not emulate', async () => {
    const r = await pdk(bad('needs-x509'))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('LUA_MODULE_UNSUPPORTED')
    expect(r.stderr).toContain(
      '$.plugins[0].module: requires "resty.openssl.x509.chain" (kong.plugins.lua-needs-x509.handler → resty.openssl.x509.chain), which broker does not emulate (of X.509, broker emulates reading a certificate',
    )
    expect(r.stderr).not.toMatch(/\n\s+at /)
    // a module required deep inside names the chain that led to it
    const deep = await pdk(bad('needs-lpeg'))
    expect(deep.code).toBe(2)
    expect(deep.stderr).toContain(
      'requires "lpeg" (kong.plugins.lua-needs-lpeg.handler → kong.plugins.lua-needs-lpeg.pattern → lpeg), which broker does not emulate',
    )
  })

  it('fails, exit 2, when a plugin calls a C function through ffi that broker does not back, even under pcall', async () => {
    const r = await pdk(bad('calls-c'))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('LUA_MODULE_UNSUPPORTED')
    expect(r.stderr).toContain(
      '$.plugins[0].module: calls ffi.C.time() of "ffi", which broker does not emulate (broker\'s ffi backs only open, write, close and strerror',
    )
  })

  it("stops at a schema that names a typedef broker has not written, with the schema's line and no Lua traceback", async () => {
    const r = await pdk(bad('unknown-typedef'))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('FIXTURE_INVALID')
    expect(r.stderr).toContain(
      '$.plugins[0].module: failed to load: kong/plugins/lua-unknown-typedef/schema.lua:5: kong.db.schema.typedefs.no_such_typedef is not emulated by broker',
    )
    expect(r.stderr).not.toMatch(/stack traceback|in function 'error'|broker\/boot\.lua/)
  })

  it('loads resty.http, so a plugin that sends from a timer runs, but fails, exit 2, when the plugin makes a client', async () => {
    const r = await pdk(bad('needs-http'))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('LUA_MODULE_UNSUPPORTED')
    expect(r.stderr).toContain('$.plugins[0].module: calls resty.http.new() of "resty.http"')
    expect(r.stderr).toContain(
      'a replay opens no connection: resty.http is answered from the fixture\'s "outbound" list, which this fixture does not have',
    )
    expect(r.stderr).not.toMatch(/\n\s+at |stack traceback/)
  })

  it('answers resty.http from the fixture\'s "outbound", shows the call in the trace, and checks expect.outbound', async () => {
    const r = await json('fixtures/pdk/lua/introspect-active.json')
    expect(r.code).toBe(0)
    const calls = (r.out as { fixtures: Array<{ phases: Array<{ calls: unknown[] }> }> }).fixtures[0]!.phases[0]!.calls
    expect(calls).toContainEqual({
      call: 'resty.http.request_uri',
      args: ['POST', 'https://auth.example/oauth2/introspect'],
      returns: [200],
    })
    expect((await pdk('fixtures/pdk/lua/introspect-timeout.json')).stdout).toContain(
      'resty.http.request_uri("POST", "https://auth.example/oauth2/introspect") → null, "timeout"',
    )
  })

  it('fails, exit 2, naming the method and URL, when no "outbound" entry answers a resty.http call', async () => {
    const r = await pdk(bad('introspect-unmatched'))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('PDK_OUTBOUND_UNMATCHED')
    expect(r.stderr).toContain(
      '$.outbound: resty.http.request_uri(POST https://auth.example/oauth2/introspect) matches no entry of "outbound": add one',
    )
    expect(r.stderr).toContain('Add an entry to the fixture\'s "outbound" list')
    expect(r.stderr).not.toMatch(/\n\s+at |stack traceback/)
  })

  it('fails at once, exit 2, naming the module and the folders searched, when a required module is on no Lua root', async () => {
    const r = await pdk(bad('needs-rock'), '--lua-path', 'fixtures/pdk/plugins')
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('LUA_MODULE_NOT_FOUND')
    expect(r.stderr).toContain('$.plugins[0].module: requires "broker_example_rock_not_installed"')
    expect(r.stderr).toContain('/usr/share/lua/5.1')
    expect(r.stderr).toContain('fixtures/pdk/plugins')
    expect(r.stderr).not.toMatch(/\n\s+at |stack traceback|no file '/)
  })

  it('loads resty.redis, so a plugin that requires it runs, but fails at once, exit 2, when the plugin uses it', async () => {
    const r = await pdk(bad('uses-redis'))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('LUA_MODULE_UNSUPPORTED')
    expect(r.stderr).toContain('$.plugins[0].module: calls resty.redis.new() of "resty.redis"')
    expect(r.stderr).toContain('a redis policy (rate-limiting\'s policy "redis") cannot run; policy "local" can')
    expect(r.stderr).not.toMatch(/\n\s+at |stack traceback/)
    // the same plugin with its local policy passes: a shared dict counts, luatz names the window
    const ok = await json('fixtures/pdk/lua/window-limit-allowed.json')
    expect(ok.code).toBe(0)
  })

  it('verifies RS256 and raw ES256 JWTs with resty.openssl.pkey and HMACs with resty.openssl.mac, refusing forgeries', async () => {
    type Run = { passed: boolean; response: { status: number }; upstream_request: { headers: Record<string, string> } }
    const run = async (name: string) => {
      const r = await json(`fixtures/pdk/lua/${name}.json`)
      expect(r.stderr).toBe('')
      return (r.out as unknown as { fixtures: Run[] }).fixtures[0]!
    }
    const rs = await run('jwt-rs256')
    expect(rs.passed).toBe(true)
    // built with string.buffer: put, putf, the length through #buf
    expect(rs.upstream_request.headers).toMatchObject({
      'x-jwt-subject': 'bob;alg=RS256;scope=orders:read',
      'x-jwt-subject-length': '31',
    })
    expect((await run('jwt-es256')).upstream_request.headers['x-jwt-subject']).toBe('carol;alg=ES256')
    for (const refused of ['jwt-es256-tampered', 'jwt-hs256-refused', 'hmac-wrong-path']) {
      const f = await run(refused)
      expect([refused, f.passed, f.response.status]).toEqual([refused, true, 401])
    }
    const hmac = await run('hmac-valid')
    expect([hmac.response.status, hmac.upstream_request.headers['x-signature-verified']]).toEqual([201, 'hmac-sha256'])
  })

  it("names both when a Lua plugin's name differs from its folder", async () => {
    const r = await pdk(bad('wrong-name'))
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('$.plugins[0].name: is "hello" but the plugin at')
    expect(r.stderr).toContain('"lua-hello"')
  })

  it('stops an endless loop after --timeout, as a failed phase (500)', async () => {
    // No wall-clock bound here (a loaded machine stretches any): without the watchdog the loop never ends, the run
    // is killed (status null); the message says the 200 ms watchdog stopped it. Spawned: a loop that never ends
    // in this process would stop the test runner with it.
    const r = await runCli(['pdk', 'run', bad('endless-loop'), '--timeout', '200'], { spawn: true, timeoutMs: 60_000 })
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('[lua-loop] access phase did not finish within 200 ms (--timeout): stopped')
    expect(r.stdout).toContain('kong/plugins/lua-loop/handler.lua:5')
  })

  it("fails the phase on a Lua error with the message and a traceback naming the plugin's files and lines", async () => {
    const r = await pdk(bad('lua-error'))
    expect(r.code).toBe(1)
    expect(r.stdout).toContain("kong/plugins/lua-fails/helpers.lua:4: attempt to index local 'limits' (a nil value)")
    expect(r.stdout).toContain('stack traceback:')
    expect(r.stdout).toContain('kong/plugins/lua-fails/handler.lua:5:')
    expect(r.stdout).toContain('response 500 (source: error)')
  })
})
