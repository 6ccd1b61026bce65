import { afterAll, describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { LuaRuntime } from './runtime.js'

// One query, read through every face that decodes arguments: the kit (kong.request.get_query), Lua's
// ngx.req.get_uri_args and ngx.decode_args. OpenResty decodes them all with one routine
// (ngx_http_lua_unescape_uri): `+` a space, a malformed `%` kept as it is, an argument whose key is
// empty left out, a bare key true, repeated keys a list.
const runtimes: LuaRuntime[] = []
afterAll(() => runtimes.forEach((r) => r.close()))

async function faces(query: string, max?: number) {
  const probe = kitFor({ request: { url: `http://example.com/p?${query}` } }, 'access')
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
  const kong = await rt.callKit(ctx, kit, undefined, 'request.get_query', max === undefined ? [] : [max])
  // the runtime is now in the request: Lua's own ngx functions read the same state
  const lua = (code: string) => rt.vm.run(code, '=test')[0]
  const m = max === undefined ? 'nil' : String(max)
  return {
    kong,
    uriArgs: lua(`return ngx.req.get_uri_args(${m})`),
    decodeArgs: lua(`return ngx.decode_args(${JSON.stringify(query)}, ${m})`),
    lua,
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
    expect(f.uriArgs).toEqual({ a: '1', b: '2' })
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
