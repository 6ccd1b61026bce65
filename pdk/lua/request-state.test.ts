import { afterAll, describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { toList } from '../kit/private/values.js'
import { LuaRuntime } from './runtime.js'

// One request's state read and written through both faces: the kit (kong.*) and a Lua plugin's own ngx.*
// calls. OpenResty decodes arguments with one routine, and Kong's kong.service.* writes the nginx variables
// ngx.var writes; the two faces must agree the same way.
const runtimes: LuaRuntime[] = []
afterAll(() => runtimes.forEach((r) => r.close()))

/** A Lua runtime inside a request to `url` (access phase), with that request's kit. */
async function request(url = 'http://client.test/p?q=1') {
  const probe = kitFor({ request: { url } }, 'access')
  const rt = await LuaRuntime.bare(probe)
  runtimes.push(rt)
  const { ctx, kit } = probe
  // enters the request, so that Lua's ngx functions read and write its state
  await rt.callKit(ctx, kit, undefined, 'request.get_method', [])
  const lua = (code: string) => rt.vm.run(code, '=test')
  return { ctx, kit, rt, lua }
}

/** One query through every face that decodes arguments. */
async function faces(query: string, max?: number) {
  const { ctx, kit, rt, lua } = await request(`http://example.com/p?${query}`)
  const [kong, ...more] = toList(
    await rt.callKit(ctx, kit, undefined, 'request.get_query', max === undefined ? [] : [max]),
  )
  const first = (code: string) => lua(code)[0]
  const m = max === undefined ? 'nil' : String(max)
  return {
    kong,
    more,
    uriArgs: first(`return ngx.req.get_uri_args(${m})`),
    decodeArgs: first(`return ngx.decode_args(${JSON.stringify(query)}, ${m})`),
    lua: first,
  }
}

describe('one argument decoder for the kit and Lua', () => {
  it('keeps a malformed % as it is and still decodes the escapes after it', async () => {
    const f = await faces('a=%zz%41&b=100%&c=%4')
    const want = { a: '%zzA', b: '100%', c: '%4' }
    expect(f.kong).toEqual(want)
    expect(f.uriArgs).toEqual(want)
    expect(f.decodeArgs).toEqual(want)
  })

  it('leaves out an argument whose key is empty, even with a value', async () => {
    const f = await faces('=x&b&=&%20=sp')
    const want = { b: true, ' ': 'sp' }
    expect(f.kong).toEqual(want)
    expect(f.uriArgs).toEqual(want)
    expect(f.decodeArgs).toEqual(want)
  })

  it('gives a bare key true, repeated keys a list in order, + a space', async () => {
    const f = await faces('a=1&a&b=x+y&a=2')
    const want = { a: ['1', true, '2'], b: 'x y' }
    expect(f.kong).toEqual(want)
    expect(f.uriArgs).toEqual(want)
    expect(f.decodeArgs).toEqual(want)
  })

  it('gives Lua the bytes an escape stands for, UTF-8 or not', async () => {
    const f = await faces('v=%FF%00a&w=caf%C3%A9')
    expect(f.lua('local a = ngx.req.get_uri_args() return #a.v')).toBe(3)
    expect(f.lua('local a = ngx.req.get_uri_args() return string.byte(a.v, 1)')).toBe(0xff)
    expect(f.lua('return ngx.decode_args("w=caf%C3%A9").w')).toBe('café')
    expect(f.lua('return ngx.unescape_uri("%FF%zz+")')).toEqual(Buffer.from([0xff, 0x25, 0x7a, 0x7a, 0x20]))
  })

  it('keeps at most max arguments, empty ones not counted, through get_uri_args and get_query', async () => {
    const f = await faces('a=1&&b=2&c=3', 2)
    expect(f.kong).toEqual({ a: '1', b: '2' })
    expect(f.more).toEqual(['truncated'])
    expect(f.uriArgs).toEqual({ a: '1', b: '2' })
    expect(f.lua('return select(2, ngx.req.get_uri_args(2))')).toEqual('truncated')
  })

  it('counts every &-separated part against max through ngx.decode_args, as its C routine does', async () => {
    const f = await faces('a=1&&b=2&c=3', 2)
    expect(f.decodeArgs).toEqual({ a: '1' })
    expect(f.lua('return ngx.decode_args("a&b&c", 0)')).toEqual({ a: true, b: true, c: true })
  })

  it("answers $arg_<name> as nginx does: the first match whatever its case, undecoded, nil without '='", async () => {
    const f = await faces('A=%41b&a=2&flag&e=')
    expect(f.lua('return ngx.var.arg_a')).toBe('%41b')
    expect(f.lua('return ngx.var.arg_flag == nil')).toBe(true)
    expect(f.lua('return ngx.var.arg_e')).toBe('')
    expect(f.lua('return ngx.var.arg_none == nil')).toBe(true)
  })
})

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
