import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runSpecFile, type SpecFileOptions, type SpecResult } from './session.js'

// busted's behaviour on small specs of our own, each file in a temp plugin root of its own.
async function run(spec: string, extra: Partial<SpecFileOptions> = {}, files: Record<string, string> = {}) {
  const root = mkdtempSync(join(tmpdir(), 'spec-'))
  for (const [name, text] of Object.entries({ 'spec/x_spec.lua': spec, ...files })) {
    mkdirSync(dirname(join(root, name)), { recursive: true })
    writeFileSync(join(root, name), text)
  }
  const printed: string[] = []
  const results = await runSpecFile({
    root,
    file: join(root, 'spec/x_spec.lua'),
    shown: 'spec/x_spec.lua',
    timeoutMs: 5000,
    print: (l) => printed.push(l),
    ...extra,
  })
  return { results, printed }
}
const brief = (rs: SpecResult[]) => rs.map((r) => `${r.status} ${r.name}`)

describe('busted: blocks, tests and hooks', () => {
  it('runs hooks in busted order: strict setup at the block, lazy before the first test, each hooks around every test', async () => {
    const { printed } = await run(`
      describe("a", function()
        strict_setup(function() print("setup") end)
        lazy_setup(function() print("lazy") end)
        before_each(function() print("before a") end)
        after_each(function() print("after a") end)
        teardown(function() print("teardown") end)
        lazy_teardown(function() print("lazy teardown") end)
        describe("b", function()
          before_each(function() print("before b") end)
          after_each(function() print("after b") end)
          it("t1", function() print("t1") end)
        end)
        it("t2", function() print("t2") end)
      end)`)
    expect(printed).toEqual([
      'setup',
      'lazy',
      'before a',
      'before b',
      't1',
      'after b',
      'after a',
      'before a',
      't2',
      'after a',
      'lazy teardown',
      'teardown',
    ])
  })

  it('runs lazy_setup once per block, and not at all for a block whose tests are all filtered out', async () => {
    const { printed, results } = await run(
      `
      describe("one", function()
        lazy_setup(function() print("lazy one") end)
        it("x #keep", function() end)
        it("y #keep", function() end)
      end)
      describe("two", function()
        lazy_setup(function() print("lazy two") end)
        it("z", function() end)
      end)`,
      { tags: ['keep'] },
    )
    expect(printed).toEqual(['lazy one'])
    expect(brief(results)).toEqual(['success one x #keep', 'success one y #keep'])
  })

  it('setup is strict unless lazy is asked for (busted --lazy)', async () => {
    const spec = `describe("d", function()
      setup(function() print("setup") end)
      it("skipped #no", function() end)
    end)`
    expect((await run(spec, { excludeTags: ['no'] })).printed).toEqual(['setup'])
    expect((await run(spec, { excludeTags: ['no'], lazy: true })).printed).toEqual([])
  })

  it('runs finally after the test body, even when it failed, before after_each', async () => {
    const { printed, results } = await run(`
      describe("f", function()
        after_each(function() print("after") end)
        it("fails", function()
          finally(function() print("finally") end)
          assert.equal(1, 2)
        end)
      end)`)
    expect(printed).toEqual(['finally', 'after'])
    expect(results[0]!.status).toBe('failure')
  })

  it('reports pending tests (pending, and it without a function)', async () => {
    const { results } = await run(`
      describe("p", function()
        pending("later")
        it("no body")
      end)`)
    expect(brief(results)).toEqual(['pending p later', 'pending p no body'])
  })

  it('insulate restores globals and loaded modules; expose keeps them', async () => {
    const { results } = await run(
      `
      insulate("i", function()
        it("sets", function() leaked = 1; require("mymod").touched = true end)
      end)
      it("sees nothing of it", function()
        assert.is_nil(leaked)
        assert.is_nil(require("mymod").touched)
      end)
      expose("e", function()
        it("sets", function() kept = 2 end)
      end)
      it("sees what expose set", function() assert.equal(2, kept) end)`,
      {},
      { 'mymod.lua': 'return {}' },
    )
    expect(brief(results).filter((r) => !r.startsWith('success'))).toEqual([])
    expect(results).toHaveLength(4)
  })

  it("ngx.log writes as nginx's does whatever the spec makes of the kong global (nil, or a table of its own)", async () => {
    const { results } = await run(
      `
      local saved = kong
      after_each(function() kong = saved end)
      it("logs with kong nil", function()
        kong = nil
        ngx.log(ngx.DEBUG, "no kong here")
      end)
      it("logs with a kong of the spec's", function()
        kong = { ctx = { plugin = {} } }
        ngx.log(ngx.ERR, "a mock kong")
      end)`,
    )
    expect(brief(results)).toEqual(['success logs with kong nil', "success logs with a kong of the spec's"])
  })

  it('selects tests by #tags in the full name, --exclude-tags, --filter and --filter-out', async () => {
    const spec = `describe("api #slow", function()
      it("one #db", function() end)
      it("two", function() end)
    end)
    it("three", function() end)`
    expect(brief((await run(spec, { tags: ['slow'] })).results)).toEqual([
      'success api #slow one #db',
      'success api #slow two',
    ])
    expect(brief((await run(spec, { excludeTags: ['db'] })).results)).toEqual([
      'success api #slow two',
      'success three',
    ])
    expect(brief((await run(spec, { filter: ['^three$', 'tw'] })).results)).toEqual([
      'success api #slow two',
      'success three',
    ])
    expect(brief((await run(spec, { filterOut: ['#slow'] })).results)).toEqual(['success three'])
  })
})

describe('busted: failures and errors', () => {
  it('an assertion is a failure at the spec line, any other error an error', async () => {
    const { results } = await run(`describe("d", function()
      it("fails", function()
        assert.are.same({ 1 }, { 2 })
      end)
      it("errors", function() error("boom") end)
    end)`)
    expect(results.map((r) => r.status)).toEqual(['failure', 'error'])
    expect(results[0]!.message).toMatch(/^spec\/x_spec\.lua:3: Expected objects to be the same/)
    expect(results[0]!.trace).toMatchObject({ short_src: 'spec/x_spec.lua', currentline: 3 })
    expect(results[1]!.message).toBe('spec/x_spec.lua:5: boom')
  })

  it("an error raised inside broker's own Lua (a require that finds nothing) is placed at the spec's line", async () => {
    const { results } = await run(`describe("d", function()
      it("requires", function()
        require "no.such.module"
      end)
    end)`)
    expect(results[0]!.status).toBe('error')
    expect(results[0]!.trace).toMatchObject({ short_src: 'spec/x_spec.lua', currentline: 3 })
  })

  it('a failing before_each fails each test of its block (the body does not run), after_each still runs', async () => {
    const { results, printed } = await run(`
      describe("outer", function()
        describe("inner", function()
          before_each(function() assert.is_true(false) end)
          after_each(function() print("after") end)
          it("a", function() print("body a") end)
          it("b", function() print("body b") end)
        end)
        it("c", function() end)
      end)`)
    expect(brief(results)).toEqual(['failure outer inner a', 'failure outer inner b', 'success outer c'])
    expect(results[0]!.descriptor).toBe('before_each')
    expect(printed).toEqual(['after', 'after'])
  })

  it('a failing after_each fails the test that passed', async () => {
    const { results } = await run(`describe("d", function()
      after_each(function() error("cleanup failed") end)
      it("t", function() end)
    end)`)
    expect(results).toMatchObject([{ status: 'error', name: 'd t', descriptor: 'after_each' }])
  })

  it('a hook given nil registers nothing and hands back a function that registers the hook, as busted does', async () => {
    const { results, printed } = await run(`describe("d", function()
      local unset
      after_each(unset)
      before_each()(function() print("curried") end)
      it("t", function() end)
    end)`)
    expect(brief(results)).toEqual(['success d t'])
    expect(printed).toEqual(['curried'])
  })

  it("a failing lazy_setup is reported once for its block, and the block's tests do not run", async () => {
    const { results, printed } = await run(`
      describe("d", function()
        lazy_setup(function() error("no database") end)
        lazy_teardown(function() print("lazy teardown") end)
        it("a", function() print("a") end)
        it("b", function() print("b") end)
      end)
      it("after", function() end)`)
    expect(brief(results)).toEqual(['error d', 'success after'])
    expect(results[0]).toMatchObject({ descriptor: 'lazy_setup', message: 'spec/x_spec.lua:3: no database' })
    expect(printed).toEqual(['lazy teardown'])
  })

  it('a spec file that does not compile is one error naming the file and line', async () => {
    const { results } = await run('describe("x", function()\n  it("y", function( end)\nend)')
    expect(results).toHaveLength(1)
    expect(results[0]).toMatchObject({ status: 'error', name: 'spec/x_spec.lua', descriptor: 'file', line: 2 })
  })

  it('an error in a describe body is an error of that block', async () => {
    const { results } = await run('describe("broken", function() local x = nil; x.y = 1 end)')
    expect(results).toMatchObject([{ status: 'error', name: 'broken', descriptor: 'describe' }])
  })

  it('a test that runs past the timeout is stopped as an error', async () => {
    const { results } = await run('it("loops", function() while true do end end)\nit("next", function() end)', {
      timeoutMs: 200,
    })
    expect(brief(results)).toEqual(['error loops', 'success next'])
    expect(results[0]!.message).toContain('did not finish within 200 ms')
  })

  it("the spec's own helper modules resolve from the plugin root", async () => {
    const { results } = await run(
      'local h = require "spec.my_helpers"\nit("uses it", function() assert.equal(42, h.answer) end)',
      {},
      { 'spec/my_helpers.lua': 'return { answer = 42 }' },
    )
    expect(brief(results)).toEqual(['success uses it'])
  })

  it("a module that protects the tables it finds in _G (Kong's sandbox) leaves luassert's assert working", async () => {
    const { results } = await run(
      `require "sandboxer"
      describe("after", function()
        it("asserts", function() assert.equal(1, 1) assert.is_true(true) assert(true) end)
      end)`,
      {},
      {
        'sandboxer.lua':
          'for k, v in pairs(_G) do if type(v) == "table" and k ~= "_G" and k ~= "package" then pcall(setmetatable, v, { __newindex = error }) end end',
      },
    )
    expect(brief(results)).toEqual(['success after asserts'])
  })

  it('inspect (the rock Kong test plugins require) renders a value', async () => {
    const { printed } = await run('print(require("inspect")({ 1, "a", b = { c = true } }))')
    expect(printed).toEqual(['{ 1, "a", b = { c = true } }'])
  })
})
