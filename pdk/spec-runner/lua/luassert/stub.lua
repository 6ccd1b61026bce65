-- luassert's stubs (written for broker): a spy whose function returns the values given (or what
-- :returns / :invokes say, or :on_call_with(args) for some arguments) instead of calling through.
local spy = require "luassert.spy"
local util = require "luassert.util"
local M = {}

local function pack(...) return { n = select("#", ...), ... } end

local function matches(want, args)
  for i = 1, math.max(want.n, args.n) do
    if not util.deep_compare(want[i], args[i]) then return false end
  end
  return true
end

local function answer(how, ...)
  if how.invoke then return how.invoke(...) end
  return table.unpack(how.values, 1, how.values.n)
end

--- A stub in place of t[key] (a free one when t is nil), returning the values given.
local function new(t, key, ...)
  local state = { values = pack(...), rules = {} }
  local s = spy.new(function(...)
    local args = pack(...)
    for _, rule in ipairs(state.rules) do
      if matches(rule.args, args) then return answer(rule, ...) end
    end
    return answer(state, ...)
  end)
  function s.returns(self, ...) state.values, state.invoke = pack(...), nil return self end
  function s.invokes(self, fn) state.invoke = fn return self end
  function s.on_call_with(self, ...)
    local rule = { args = pack(...), values = pack() }
    table.insert(state.rules, 1, rule)
    return {
      returns = function(r, ...) rule.values = pack(...) return r end,
      invokes = function(r, fn) rule.invoke = fn return r end,
    }
  end
  if t ~= nil then
    s.target, s.key, s.original = t, key, t[key]
    rawset(t, key, s)
  end
  return s
end

M.new = new
return setmetatable(M, { __call = function(_, t, key, ...) return new(t, key, ...) end })
