import { afterAll, describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { LuaRuntime } from './runtime.js'

// The request Kong proxies is nginx's state ($upstream_host, $upstream_uri, $args, the balancer's target):
// kong.service.* and a Lua plugin's own ngx.var / ngx.ctx writes change the same state the same way.
const runtimes: LuaRuntime[] = []
afterAll(() => runtimes.forEach((r) => r.close()))

async function request(url = 'http://client.test/p?q=1') {
  const probe = kitFor({ request: { url } }, 'access')
  const rt = await LuaRuntime.create({
    roots: [],
    templates: [],
    configuration: {},
    db: {},
    probe,
    heapLimit: 32 * 1024 * 1024,
    file: 'test.json',
  })
  runtimes.push(rt)
  const { ctx, kit } = probe
  // enters the request, so that Lua's ngx functions read and write its state
  await rt.callKit(ctx, kit, undefined, 'request.get_method', [])
  const lua = (code: string) => rt.vm.run(code, '=test')
  return { ctx, kit, lua }
}

describe('one upstream state for the kit and Lua', () => {
  it('sends the service one Host header, whichever way a plugin set it', async () => {
    const ways: Array<(r: Awaited<ReturnType<typeof request>>) => unknown> = [
      (r) => r.lua('ngx.var.upstream_host = "a.test"'),
      (r) => r.lua('kong.service.request.set_header("Host", "a.test")'),
      (r) => r.lua('ngx.req.set_header("Host", "a.test")'),
      (r) => r.kit.service.request.add_header('Host', 'a.test'),
      (r) => r.kit.service.request.set_headers({ Host: ['x.test', 'a.test'] }),
      (r) => r.lua('kong.service.request.set_headers({ Host = { "x.test", "a.test" } })'),
    ]
    for (const way of ways) {
      const r = await request()
      way(r)
      expect(r.ctx.upstream.headers.all('host')).toEqual(['a.test'])
      expect(r.lua('return ngx.var.upstream_host')).toEqual(['a.test'])
      expect(r.kit.nginx.get_var('upstream_host')).toBe('a.test')
    }
  })

  it('falls back to the service host when a plugin clears $upstream_host', async () => {
    const r = await request()
    r.lua('ngx.var.upstream_host = nil')
    expect(r.ctx.upstream.headers.all('host')).toEqual([])
    expect(r.lua('return ngx.var.upstream_host')).toEqual([r.ctx.upstream.host])
  })

  it('gives the same path and query through ngx.var.upstream_uri / args as through the kit', async () => {
    const viaLua = await request()
    viaLua.lua('ngx.var.upstream_uri = "/new?x=1"')
    const viaKit = await request()
    viaKit.kit.service.request.set_path('/new')
    viaKit.kit.service.request.set_raw_query('x=1')
    for (const r of [viaLua, viaKit]) {
      expect([r.ctx.upstream.path, r.ctx.upstream.query]).toEqual(['/new', 'x=1'])
      expect(r.lua('return ngx.var.upstream_uri')).toEqual(['/new?x=1'])
      expect(r.kit.nginx.get_var('upstream_uri')).toBe('/new?x=1')
    }
  })

  it("sets the balancer's target the same through ngx.ctx.balancer_data as through kong.service.set_target", async () => {
    const viaLua = await request()
    viaLua.lua('ngx.ctx.balancer_data.host = "b.test"; ngx.ctx.balancer_data.port = 8443')
    const viaKit = await request()
    viaKit.kit.service.set_target('b.test', 8443)
    for (const r of [viaLua, viaKit]) expect([r.ctx.upstream.host, r.ctx.upstream.port]).toEqual(['b.test', 8443])
  })

  it('changes the scheme through ngx.var.upstream_scheme as kong.service.request.set_scheme does', async () => {
    const viaLua = await request()
    viaLua.lua('ngx.var.upstream_scheme = "https"')
    const viaKit = await request()
    viaKit.kit.service.request.set_scheme('https')
    for (const r of [viaLua, viaKit]) {
      expect(r.ctx.upstream.scheme).toBe('https')
      expect(r.lua('return ngx.var.upstream_scheme')).toEqual(['https'])
      expect(r.kit.nginx.get_var('upstream_scheme')).toBe('https')
    }
  })
})
