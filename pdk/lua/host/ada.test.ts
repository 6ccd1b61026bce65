import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { LIB_DIR } from '../modules.js'
import { createVm } from '../engine.js'
import { ADA_OPS } from './ada.js'

// broker's resty.ada and resty.ada.search, loaded from their files in a bare VM whose __host answers
// with the ada operations only, checked against what Node's URL (the WHATWG parser ada implements) gives.
const vm = await createVm({ heapLimit: 32 * 1024 * 1024 })
afterAll(() => vm.close())
vm.register('__host', (op, ...args) => ADA_OPS[String(op)]!(undefined as never, ...args))
for (const name of ['resty.ada', 'resty.ada.search']) {
  const file = `${name.replaceAll('.', '/')}.lua`
  const src = readFileSync(join(LIB_DIR, file), 'utf8')
  vm.run(`package.preload["${name}"] = assert(load(${JSON.stringify(src)}, "@${file}"))`, '=preload')
}
vm.run('function run(code, ...) return assert(load(code, "=test"))(...) end', '=run')
const lua = (code: string, ...args: unknown[]) => vm.call('run', code, ...args)

const SAMPLE = 'https://user:pass@Example.COM:8443/a/../b/c?x=1&y=two#frag'

describe('resty.ada', () => {
  it('parses a URL and reads its components as the WHATWG parser normalizes them', () => {
    const u = new URL(SAMPLE)
    expect(
      lua(
        `local u = assert(require("resty.ada").parse(...))
           return u:get_href(), u:get_protocol(), u:get_username(), u:get_password(), u:get_host(), u:get_hostname(),
             u:get_port(), u:get_pathname(), u:get_search(), u:get_hash(), u:get_origin(), tostring(u), #u`,
        SAMPLE,
      ),
    ).toEqual([
      u.href,
      'https:',
      'user',
      'pass',
      'example.com:8443',
      'example.com',
      8443,
      '/b/c',
      '?x=1&y=two',
      '#frag',
      'https://example.com:8443',
      u.href,
      u.href.length,
    ])
  })

  it('answers the has_* questions and the scheme and host types', () => {
    expect(
      lua(`local ada = require "resty.ada"
           local u = ada.parse("http://10.0.0.1/p")
           local v = ada.parse("wss://[::1]:9000/?")
           return u:has_credentials(), u:has_port(), u:has_search(), u:has_hash(), u:get_scheme_type(), u:get_host_type(),
             v:has_search(), v:get_search(), v:has_port(), v:get_port(), v:get_scheme_type(), v:get_host_type()`),
    ).toEqual([false, false, false, false, 0, 1, true, '', true, 9000, 5, 2])
  })

  it('answers nil, "invalid url" for a string that does not parse, and raises for a value that is not a string', () => {
    expect(lua('return require("resty.ada").parse("not a url")')).toEqual([undefined, 'invalid url'])
    expect(lua('return require("resty.ada").parse("http://exa mple.com/")')).toEqual([undefined, 'invalid url'])
    expect(lua('return pcall(require("resty.ada").parse, 42)')).toEqual([false, 'invalid url'])
    expect(lua('return require("resty.ada").parse_with_base("/x?y", "nope")')).toEqual([
      undefined,
      'invalid url or base',
    ])
    expect(lua('return require("resty.ada").parse_with_base("../x?y", "https://h.test/a/b").href')).toEqual([
      'https://h.test/x?y',
    ])
  })

  it('chains setters that return the URL, as the redirect plugin sets the path and the query', () => {
    expect(
      lua(`local u = require("resty.ada").parse("https://new.example.com/ignored?dropped=1#top")
           local same = u:set_pathname("/orders/42 items"):set_search("sort=desc&q=a b")
           local cleared = require("resty.ada").parse("https://h.test/p?q=1"):set_search(""):get_href()
           return same == u, u:get_href(), cleared`),
    ).toEqual([true, 'https://new.example.com/orders/42%20items?sort=desc&q=a%20b#top', 'https://h.test/p'])
    expect(
      lua(`local u = require("resty.ada").parse("http://h.test/p")
           return u:set_protocol("https"):set_host("x.test:81"):set_port(8080):set_hash("h"):set_username("bo"):get_href()`),
    ).toEqual(['https://bo@x.test:8080/p#h'])
  })

  it('answers nil, "unable to set <part>" for what the URL refuses, keeping it as it was', () => {
    expect(
      lua(`local u = require("resty.ada").parse("mailto:someone@example.com")
           local a, ea = u:set_pathname("/x")
           local b, eb = u:set_port("80")
           local c, ec = require("resty.ada").parse("https://h.test/"):set_port("http")
           local d, ed = u:set_href("::")
           return a, ea, b, eb, c, ec, d, ed, u:get_href()`),
    ).toEqual([
      undefined,
      'unable to set pathname',
      undefined,
      'unable to set port',
      undefined,
      'unable to set port',
      undefined,
      'unable to set href',
      'mailto:someone@example.com',
    ])
    expect(
      lua(`local ada = require "resty.ada"
           local same = ada.parse("https://x.test/p"):set_host("X.test:443")
           local a, ea = ada.parse("https://x.test/p"):set_hostname("exa mple")
           return same and same:get_href(), a, ea`),
    ).toEqual(['https://x.test/p', undefined, 'unable to set hostname'])
    expect(lua('return pcall(function() require("resty.ada").parse("http://h.test/"):set_search(nil) end)')).toEqual([
      false,
      'invalid query',
    ])
  })

  it('clears the port, search and hash, and has the static form of each method', () => {
    expect(
      lua(`local ada = require "resty.ada"
           return ada.parse("http://h.test:81/p?q#f"):clear_port():clear_search():clear_hash():get_href(),
             ada.get_hostname("http://H.test/"), ada.clear_port("http://h.test:81/"), ada.get_href("nope"),
             ada.can_parse("http://h.test"), ada.can_parse("h.test"), ada.idna_to_ascii("bücher.example")`),
    ).toEqual(['http://h.test/p', 'h.test', 'http://h.test/', undefined, true, false, 'xn--bcher-kva.example'])
  })
})

describe('resty.ada.search', () => {
  it('removes an argument from a query string as URLSearchParams does (kong.service.request.clear_query_arg)', () => {
    expect(
      lua(`local search = require "resty.ada.search"
           return search.remove("a=1&b=2&a=3", "a"), search.remove("?x=1+2&y", "y"), search.get("a=1&a=2", "a"),
             search.has("a=1", "b"), search.size("a=1&b=2"), search.set("b=2&a=1", "b", "x y"), search.sort("b=2&a=1")`),
    ).toEqual(['b=2', 'x=1+2', '1', false, 2, 'b=x+y&a=1', 'a=1&b=2'])
  })

  it('gives the query helpers of a URL object', () => {
    expect(
      lua(`local u = require("resty.ada").parse("https://h.test/?a=1&b=2&a=3")
           local all = u:search_get_all("a")
           return #all, all[2], u:search_has_value("b", "2"), u:search_remove("a"):get_href()`),
    ).toEqual([2, '3', true, 'https://h.test/?b=2'])
  })
})
