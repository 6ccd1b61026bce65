import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { LIB_DIR } from './modules.js'
import { createVm } from './engine.js'

// broker's resty.http (the fallback), loaded from its file in a bare VM whose __host stands in for the
// runtime's: it says whether the fixture has `outbound`, records what the module sends, and answers
// what the test sets.
const vm = await createVm({ heapLimit: 32 * 1024 * 1024 })
afterAll(() => vm.close())

let enabled = true
let answer: unknown[] = [200, 'OK', { 'Content-Type': 'application/json' }, '{"active":true}']
const sent: unknown[][] = []
const told: string[] = []
vm.register('__host', (op: unknown, ...args: unknown[]) => {
  if (op === 'http_enabled') return [enabled]
  if (op === 'http_send') {
    sent.push(args)
    return answer
  }
  throw new Error(`no host op ${String(op)}`)
})
vm.register('__unsupported', (module, what) => {
  told.push(`${String(module)} ${String(what)}`)
  return [`${String(what)}() is not emulated by broker`]
})
vm.run('function run(code, ...) return assert(load(code, "=test"))(...) end', '=run')
const lua = (code: string, ...args: unknown[]) => vm.call('run', code, ...args)
const preload = (name: string, file: string) => {
  const src = readFileSync(join(LIB_DIR, file), 'utf8')
  lua(`package.preload[${JSON.stringify(name)}] = assert(load(${JSON.stringify(src)}, "@${file}"))`)
}
lua(`ngx = { encode_args = function(t)
       local keys = {}
       for k in pairs(t) do keys[#keys + 1] = k end
       table.sort(keys)
       for i, k in ipairs(keys) do keys[i] = k .. "=" .. tostring(t[k]) end
       return table.concat(keys, "&")
     end }`)
preload('broker.unsupported', 'broker/unsupported.lua')
preload('resty.http', 'fallback/resty/http.lua')

beforeEach(() => {
  enabled = true
  sent.length = 0
  told.length = 0
  answer = [200, 'OK', { 'Content-Type': 'application/json' }, '{"active":true}']
})

describe('resty.http without "outbound" in the fixture', () => {
  it('loads, and making a client tells the host and raises at the plugin line', () => {
    enabled = false
    const [ok, err] = lua('local http = require "resty.http"; return pcall(function() return http.new() end)')
    expect(ok).toBe(false)
    expect(err).toBe('test:1: resty.http.new() is not emulated by broker')
    expect(told).toEqual(['resty.http resty.http.new'])
  })
})

describe('request_uri', () => {
  it('sends the method, the URL with its query, the headers and the body; answers status, reason, headers, body', () => {
    const got = lua(`local httpc = require("resty.http").new()
      httpc:set_timeout(1000)
      local res, err = httpc:request_uri("https://auth.example/introspect?x=1", {
        method = "POST", body = "token=abc", headers = { ["Content-Type"] = "application/x-www-form-urlencoded" },
        ssl_verify = false, keepalive = false })
      return res.status, res.reason, res.headers["content-type"], res.headers["CONTENT-TYPE"], res.headers.content_type,
        res.body, err`)
    expect(got).toEqual([200, 'OK', 'application/json', 'application/json', undefined, '{"active":true}', undefined])
    expect(sent).toEqual([
      [
        'request_uri',
        'POST',
        'https://auth.example/introspect?x=1',
        {
          'Content-Type': 'application/x-www-form-urlencoded',
          Host: 'auth.example',
          'User-Agent': 'lua-resty-http/0.17.2 (Lua) ngx_lua/10026',
          'Content-Length': '9',
        },
        'token=abc',
      ],
    ])
  })

  it("takes params.query (a table) over the URI's, keeps a port that is not the default, GET by default", () => {
    lua(`local httpc = require("resty.http").new()
      return httpc:request_uri("http://auth.example:8080/a?old=1", { query = { b = 2, a = 1 } })`)
    expect(sent[0]!.slice(1, 3)).toEqual(['GET', 'http://auth.example:8080/a?a=1&b=2'])
    expect(sent[0]![3]).toMatchObject({ Host: 'auth.example:8080' })
    expect(sent[0]![4]).toBeUndefined()
  })

  it("answers nil, err for an entry's error, and for a URI it cannot parse", () => {
    answer = [undefined, 'timeout']
    const httpc = 'local httpc = require("resty.http").new()'
    expect(lua(`${httpc} return httpc:request_uri("http://auth.example/")`)).toEqual([undefined, 'timeout'])
    expect(lua(`${httpc} return httpc:request_uri("ftp:/x")`)).toEqual([undefined, 'bad uri: ftp:/x'])
  })

  it('raises at the plugin line when no entry answers, even under pcall the host knows', () => {
    answer = [false, 'resty.http.request_uri(GET http://x.example/) matches no entry of "outbound"']
    const [ok, err] = lua(`local httpc = require("resty.http").new()
      return pcall(function()
        local res = httpc:request_uri("http://x.example/")
        return res
      end)`)
    expect(ok).toBe(false)
    expect(err).toBe('test:3: resty.http.request_uri(GET http://x.example/) matches no entry of "outbound"')
  })
})

describe('connect, request, read_body', () => {
  it('sends to the host connected, and reads the body once', () => {
    const got = lua(`local httpc = require("resty.http").new()
      assert(httpc:connect({ scheme = "https", host = "api.example", port = 8443 }))
      local res = assert(httpc:request({ method = "PUT", path = "/v1/x", query = "y=1", body = { "a", "b" } }))
      local body = res:read_body()
      local again = res:read_body()
      assert(httpc:set_keepalive())
      local _, err = httpc:request({ path = "/" })
      return res.status, res.has_body, body, again, err`)
    expect(got).toEqual([200, true, '{"active":true}', '', 'not connected'])
    expect(sent[0]!.slice(0, 3)).toEqual(['request', 'PUT', 'https://api.example:8443/v1/x?y=1'])
    expect(sent[0]![4]).toBe('ab')
  })

  it('takes the older connect(host, port) and ssl_handshake', () => {
    lua(`local httpc = require("resty.http").new()
      assert(httpc:connect("api.example", 443))
      assert(httpc:ssl_handshake(nil, "api.example", true))
      return httpc:request({ path = "/" })`)
    expect(sent[0]!.slice(1, 3)).toEqual(['GET', 'https://api.example/'])
  })

  it('parses URIs as the library does: default ports, query in the path unless told', () => {
    const parse = (uri: string, inPath?: boolean) =>
      lua('return require("resty.http").new():parse_uri(...)', uri, inPath)[0]
    expect(parse('https://a.example/p?q=1')).toEqual(['https', 'a.example', 443, '/p?q=1', ''])
    expect(parse('http://[::1]:81', false)).toEqual(['http', '[::1]', 81, '/', ''])
    expect(parse('//a.example/p?q=1', false)).toEqual(['http', 'a.example', 80, '/p', 'q=1'])
  })
})
