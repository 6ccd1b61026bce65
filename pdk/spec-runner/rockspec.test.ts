import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createVm } from '../lua/engine.js'
import { rockspecDependencies, rockspecModules } from './rockspec.js'
import { runSpecFile } from './session.js'

// A plugin kept outside kong/plugins/ (globocom's proxy-cache keeps it in proxy-cache/): its rockspec's
// build.modules says where each module is, as `luarocks make` installs it for Kong.
const FILES: Record<string, string> = {
  'kong-plugin-tagger-0.1.0-1.rockspec': `
package = "kong-plugin-tagger"
version = "0.1.0-1"
source = { url = "git://example.invalid/tagger" }
dependencies = { "lua >= 5.1" }
build = {
  type = "builtin",
  modules = {
    ["kong.plugins.tagger.handler"] = "tagger/handler.lua",
    ['kong.plugins.tagger.schema'] = 'tagger/schema.lua',
    ["kong.plugins.tagger.words"] = "tagger/words.lua",
  },
}`,
  'tagger/handler.lua': `
local words = require "kong.plugins.tagger.words"
return { PRIORITY = 900, VERSION = "0.1.0", access = function(_, conf)
  kong.service.request.set_header("x-tag", words.tag(conf.word))
end }`,
  'tagger/schema.lua': `return { name = "tagger", fields = { { config = { type = "record", fields = {
  { word = { type = "string", default = "hi" } } } } } } }`,
  'tagger/words.lua': `return { tag = function(w) return "<" .. w .. ">" end,
  boom = function() error("boom") end }`,
  'spec/tagger_spec.lua': `
local helpers = require "spec.helpers"
local words = require "kong.plugins.tagger.words"
describe("tagger", function()
  local client
  lazy_setup(function()
    local bp = helpers.get_db_utils(nil, nil, { "tagger" })
    local route = bp.routes:insert({ hosts = { "tag.test" } })
    bp.plugins:insert({ name = "tagger", route = { id = route.id }, config = { word = "yo" } })
    assert(helpers.start_kong({ plugins = "bundled,tagger" }))
    client = helpers.proxy_client()
  end)
  lazy_teardown(function() helpers.stop_kong() end)
  it("requires a module the rockspec maps", function()
    assert.equal("<a>", words.tag("a"))
  end)
  it("names a mapped file as the rockspec does", function()
    words.boom()
  end)
  it("runs the plugin the rockspec maps", function()
    local res = client:get("/", { headers = { host = "tag.test" } })
    assert.res_status(200, res)
    assert.equal("<yo>", assert.request(res).has.header("x-tag"))
  end)
end)`,
}

function root(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'spec-rockspec-'))
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, f)), { recursive: true })
    writeFileSync(join(dir, f), text)
  }
  return dir
}

describe("a rockspec's build.modules", () => {
  it('maps module names to the files the rockspec names, skipping files that are not there', async () => {
    const vm = await createVm({ heapLimit: 64 * 1024 * 1024 })
    const dir = root(Object.fromEntries(Object.entries(FILES).filter(([f]) => f !== 'tagger/words.lua')))
    const map = rockspecModules(dir, vm)
    expect(map.has('kong.plugins.tagger.words')).toBe(false)
    expect(map.get('kong.plugins.tagger.handler')).toEqual({
      file: join(dir, 'tagger/handler.lua'),
      shown: 'tagger/handler.lua',
    })
    expect(map.get('kong.plugins.tagger.schema')?.file).toBe(join(dir, 'tagger/schema.lua'))
    // where the module's own name is its path (Kong's rockspec), the root's search finds it: not mapped
    expect(
      rockspecModules(
        root({ 'x.rockspec': 'build = { modules = { ["kong.a"] = "kong/a.lua" } }', 'kong/a.lua': '' }),
        vm,
      ).size,
    ).toBe(0)
    vm.close()
  })

  it('lets a spec require and run a plugin kept outside kong/plugins/', async () => {
    const dir = root(FILES)
    const results = await runSpecFile({
      root: dir,
      file: join(dir, 'spec/tagger_spec.lua'),
      shown: 'spec/tagger_spec.lua',
      timeoutMs: 10_000,
    })
    expect(results.map((r) => `${r.status} ${r.name} ${r.message ?? ''}`.trim())).toEqual([
      'success tagger requires a module the rockspec maps',
      'error tagger names a mapped file as the rockspec does tagger/words.lua:2: boom',
      'success tagger runs the plugin the rockspec maps',
    ])
  })

  it("names the rockspec's dependencies when a module is in none of the roots: luarocks installs them", async () => {
    const dir = root({
      ...FILES,
      'kong-plugin-tagger-0.1.0-1.rockspec': FILES['kong-plugin-tagger-0.1.0-1.rockspec']!.replace(
        '"lua >= 5.1"',
        '"lua >= 5.1", "classic 0.1.0-1", "kong-lib-logger >= 0.3.0-1"',
      ),
      'spec/tagger_spec.lua': 'local Object = require "classic"',
    })
    expect(rockspecDependencies(dir)).toEqual(['classic', 'kong-lib-logger'])
    const [result] = await runSpecFile({
      root: dir,
      file: join(dir, 'spec/tagger_spec.lua'),
      shown: 'spec/tagger_spec.lua',
      timeoutMs: 10_000,
    })
    expect(result?.message).toMatch(/module 'classic' not found/)
    expect(result?.message).toMatch(
      /the rockspec depends on classic, kong-lib-logger: `luarocks --lua-version 5\.1 install <rock>` puts a rock where broker searches/,
    )
  })

  it('names the first eight of a long dependency list (a Kong checkout as the root) and counts the rest', async () => {
    const deps = Array.from({ length: 11 }, (_, i) => `"rock${i} >= 1"`).join(', ')
    const dir = root({
      'kong-3.9.1-0.rockspec': `dependencies = { ${deps} }\nbuild = { modules = {} }`,
      'spec/x_spec.lua': 'require "nowhere"',
    })
    const [result] = await runSpecFile({
      root: dir,
      file: join(dir, 'spec/x_spec.lua'),
      shown: 'spec/x_spec.lua',
      timeoutMs: 10_000,
    })
    expect(result?.message).toMatch(/depends on rock0, rock1, rock2, rock3, rock4, rock5, rock6, rock7 and 3 more: /)
  })
})
