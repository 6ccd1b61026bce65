import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runSpecFile, type SpecResult } from './session.js'

// luassert against its documented results: each `it` of a spec is named "holds: …" (must pass) or
// "fails: …" (must be a failure, not an error); the messages are checked where they matter.
async function results(spec: string): Promise<SpecResult[]> {
  const root = mkdtempSync(join(tmpdir(), 'luassert-'))
  mkdirSync(join(root, 'spec'))
  writeFileSync(join(root, 'spec/a_spec.lua'), spec)
  return runSpecFile({ root, file: join(root, 'spec/a_spec.lua'), shown: 'spec/a_spec.lua', timeoutMs: 5000 })
}

function expectVerdicts(rs: SpecResult[]) {
  const wrong = rs
    .filter((r) => (r.name.startsWith('holds') ? r.status !== 'success' : r.status !== 'failure'))
    .map((r) => `${r.name}: ${r.status} ${r.message ?? ''}`)
  expect(wrong).toEqual([])
  expect(rs.length).toBeGreaterThan(0)
}

describe('luassert assertions', () => {
  it('equal, same, truthy/falsy, type checks, matches, near, unique, returned_arguments', async () => {
    expectVerdicts(
      await results(`
      it("holds: equal", function() assert.equal(1, 1) assert.are.equal("a", "a") assert.is_not.equal({}, {}) end)
      it("fails: equal tables by reference", function() assert.equal({}, {}) end)
      it("holds: same nested", function() assert.same({ a = { 1, 2 } }, { a = { 1, 2 } }) assert.are_not.same({ 1 }, { 1, 2 }) end)
      it("fails: same", function() assert.are.same({ a = 1 }, { a = 2 }) end)
      it("holds: truthy falsy", function() assert.truthy(0) assert.is_truthy("") assert.falsy(false) assert.is_falsy(nil) end)
      it("fails: truthy", function() assert.truthy(nil) end)
      it("holds: true false", function() assert.is_true(true) assert.is_false(false) assert.is_not_true(1) end)
      it("fails: is_true of a truthy value", function() assert.is_true(1) end)
      it("holds: types", function()
        assert.is_nil(nil) assert.is_not_nil(false) assert.is_table({}) assert.is_string("") assert.is_number(1)
        assert.is_boolean(false) assert.is_function(print) assert.is_thread(coroutine.create(print))
      end)
      it("fails: is_table", function() assert.is_table("x") end)
      it("holds: matches", function() assert.matches("^a%d", "a1b") assert.matches(".", "a.b", 1, true) assert.no.matches("x", "abc") end)
      it("fails: matches", function() assert.matches("^b", "abc") end)
      it("holds: near", function() assert.near(1.5, 1.54, 0.05) assert.is_not.near(1, 2, 0.5) end)
      it("fails: near", function() assert.near(1, 1.2, 0.1) end)
      it("holds: unique", function() assert.unique({ 1, 2, 3 }) assert.is_not.unique({ 1, 1 }) assert.unique({ {}, {} }) end)
      it("fails: unique deep", function() assert.unique({ { 1 }, { 1 } }, true) end)
      it("holds: returned_arguments", function() assert.returned_arguments(2, 1, 2) end)
      it("fails: returned_arguments", function() assert.returned_arguments(1, 1, 2) end)
      it("holds: has_property", function() assert.has_property("a", { a = 1 }) assert.has_no_property("b", { a = 1 }) end)
      it("holds: plain assert returns its arguments", function()
        local a, b = assert(1, 2) assert.equal(1, a) assert.equal(2, b)
      end)
      it("fails: plain assert", function() assert(false, "my message") end)
      it("fails: a custom message", function() assert.equal(1, 2, "one is not two") end)
    `),
    )
  })

  it('errors: has_error, error_matches, has_no.errors', async () => {
    expectVerdicts(
      await results(`
      it("holds: has_error", function()
        assert.has_error(function() error("boom") end)
        assert.has_error(function() error("boom") end, "boom")
        assert.has_error(function() error({ code = 1 }) end, { code = 1 })
        assert.error(function() error("x") end)
        assert.has_no.errors(function() end)
      end)
      it("fails: has_error with another message", function() assert.has_error(function() error("boom") end, "bang") end)
      it("fails: has_error of a function that returns", function() assert.has_error(function() end) end)
      it("fails: has_no.errors", function() assert.has_no.errors(function() error("oops") end) end)
      it("holds: error_matches", function()
        assert.error_matches(function() error("code 42") end, "code %d+")
        assert.has_no.error_matches(function() error("code x") end, "code %d+")
      end)
      it("fails: error_matches", function() assert.error_matches(function() error("nope") end, "^yes") end)
    `),
    )
  })

  it("same's message shows both tables with the differing key marked", async () => {
    const [r] = await results('it("x", function() assert.same({ a = 1, b = { c = 2 } }, { a = 1, b = { c = 3 } }) end)')
    expect(r!.status).toBe('failure')
    expect(r!.message).toContain('Expected objects to be the same.')
    expect(r!.message).toMatch(/Passed in:\n[^\n]*\{\n {2}\[a\] = 1\n \*\[b\] = \{\n {3}\*\[c\] = 3 \} \}\nExpected:/)
    expect(r!.message).toMatch(/Expected:\n[^\n]*\{\n {2}\[a\] = 1\n \*\[b\] = \{\n {3}\*\[c\] = 2 \} \}$/)
  })

  it('assert:register adds an assertion and a modifier; an unknown assertion is an error', async () => {
    const rs = await results(`
      local say = require "say"
      say:set("assertion.even.positive", "Expected %s to be even")
      say:set("assertion.even.negative", "Expected %s not to be even")
      assert:register("assertion", "even", function(state, args) return args[1] % 2 == 0 end,
        "assertion.even.positive", "assertion.even.negative")
      assert:register("modifier", "half", function(state, args) rawset(state, "half", args[1]) end)
      assert:register("assertion", "of", function(state, args) return rawget(state, "half") * 2 == args[1], { "ret", n = 1 } end)
      it("holds: registered", function()
        assert.is_even(2) assert.is_not_even(3)
        assert.equal("ret", assert.half(2).is.of(4))
      end)
      it("fails: registered", function() assert.is_even(3) end)
      it("unknown", function() assert.is_bogus(1) end)
    `)
    expect(rs.map((r) => r.status)).toEqual(['success', 'failure', 'error'])
    expect(rs[1]!.message).toBe('spec/a_spec.lua:13: Expected (number) 3 to be even')
    expect(rs[2]!.message).toBe("spec/a_spec.lua:14: luassert: unknown modifier or assertion: 'bogus' (in 'is_bogus')")
  })
})

describe('luassert spies, stubs, mocks and matchers', () => {
  it('spy.new and spy.on record calls; assert.spy(s).was.called_with, called(n), returned_with', async () => {
    expectVerdicts(
      await results(`
      it("holds: spy.new", function()
        local s = spy.new(function(a, b) return a + b end)
        assert.equal(3, s(1, 2))
        s(5, 5)
        assert.spy(s).was.called(2)
        assert.spy(s).was.called_with(1, 2)
        assert.spy(s).was_not.called_with(2, 1)
        assert.spy(s).was.returned_with(10)
        assert.spy(s).was.called_at_least(1)
        assert.spy(s).was.called_at_most(2)
        assert.is_true(spy.is_spy(s))
      end)
      it("fails: called_with other arguments", function()
        local s = spy.new(function() end)
        s("a")
        assert.spy(s).was.called_with("b")
      end)
      it("fails: called(n)", function() local s = spy.new() s() assert.spy(s).was.called(2) end)
      it("holds: spy.on passes through and reverts", function()
        local t = { f = function(x) return x * 2 end }
        local original = t.f
        local s = spy.on(t, "f")
        assert.equal(4, t.f(2))
        assert.spy(t.f).was.called_with(2)
        s:revert()
        assert.equal(original, t.f)
      end)
      it("holds: spy.on is reverted after the test that made it", function() end)
    `),
    )
  })

  it('stub returns its values, :returns, :invokes and :on_call_with change them; mock spies a table', async () => {
    expectVerdicts(
      await results(`
      local t = { f = function() return "real" end, nested = { g = function() return 1 end } }
      it("holds: stub", function()
        stub(t, "f", "fake", 2)
        local a, b = t.f()
        assert.equal("fake", a) assert.equal(2, b)
        t.f:returns("other")
        assert.equal("other", t.f())
        t.f:invokes(function(x) return x .. "!" end)
        assert.equal("hi!", t.f("hi"))
        t.f:on_call_with("special"):returns("answer")
        assert.equal("answer", t.f("special"))
        assert.stub(t.f).was.called(4)
      end)
      it("holds: the stub was reverted after its test", function() assert.equal("real", t.f()) end)
      it("holds: mock", function()
        local m = mock(t)
        assert.equal(1, t.nested.g())
        assert.spy(t.nested.g).was.called(1)
        mock.revert(m)
        assert.is_false(spy.is_spy(t.nested.g))
        local s = mock({ h = function() return 5 end }, true)
        assert.is_nil(s.h())
      end)
    `),
    )
  })

  it('matchers: _, is_table, is_string, is_not_nil, same, any_of, in called_with and same', async () => {
    expectVerdicts(
      await results(`
      it("holds: matchers in called_with", function()
        local s = spy.new()
        s({ a = 1 }, "x", 3)
        assert.spy(s).was.called_with(match.is_table(), match._, match.is_number())
        assert.spy(s).was.called_with(match.same({ a = 1 }), match.is_string(), match.is_not_nil())
        assert.spy(s).was.called_with(match.is_table(), match.any_of(match.is_number(), match.is_string()), 3)
        assert.spy(s).was_not.called_with(match.is_string(), match._, match._)
      end)
      it("holds: matchers in same", function()
        assert.same({ id = match.is_string(), n = 1 }, { id = "abc", n = 1 })
        assert.same({ id = match.matches("^a") }, { id = "abc" })
      end)
      it("fails: a matcher that does not match", function() assert.same({ id = match.is_number() }, { id = "abc" }) end)
    `),
    )
  })
})
