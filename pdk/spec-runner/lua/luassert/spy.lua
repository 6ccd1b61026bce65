-- luassert's spies (written for broker): a callable that records each call's arguments and
-- results and passes through to the function it wraps; spy.on swaps a table's field for one.
local util = require "luassert.util"
local M = {}

local spy_mt = { __broker_spy = true }
spy_mt.__index = spy_mt

local function pack(...) return { n = select("#", ...), ... } end

spy_mt.__call = function(self, ...)
  local args = pack(...)
  local call = { vals = util.copy(args), refs = args }
  self.calls[#self.calls + 1] = call
  local ret = pack(self.callback(...))
  call.returnvals = ret
  self.returnvals = ret
  return table.unpack(ret, 1, ret.n)
end

local function args_match(expected, actual)
  local n = math.max(expected.n or #expected, actual.n or #actual)
  for i = 1, n do
    if not util.deep_compare(expected[i], actual[i]) then return false end
  end
  return true
end

--- The calls whose arguments match `args` (matchers allowed).
function spy_mt:calls_with(args)
  local out = {}
  for _, c in ipairs(self.calls) do if args_match(args, c.vals) then out[#out + 1] = c end end
  return out
end
function spy_mt:called(times, compare)
  local n = #self.calls
  if times == nil then return n > 0, n end
  compare = compare or function(a, b) return a == b end
  return compare(n, times), n
end
function spy_mt:called_with(...) return #self:calls_with(pack(...)) > 0 end
function spy_mt:returned_with(...)
  local want = pack(...)
  for _, c in ipairs(self.calls) do if args_match(want, c.returnvals) then return true end end
  return false
end
function spy_mt:clear() self.calls = {} self.returnvals = nil return self end
function spy_mt:revert()
  if self.target then rawset(self.target, self.key, self.original) self.target = nil end
  return self.original
end

--- A spy around `callback` (a function, or nothing: it returns nothing).
function M.new(callback)
  if callback ~= nil and not (type(callback) == "function" or (getmetatable(callback) or {}).__call) then
    error("spy.new: expected a function, got " .. type(callback), 2)
  end
  local s = setmetatable({ calls = {}, callback = callback or function() end }, spy_mt)
  require("luassert").track(s)
  return s
end

--- Replaces t[key] with a spy on it; revert() puts the function back.
function M.on(t, key)
  local original = t[key]
  local s = M.new(original)
  s.target, s.key, s.original = t, key, original
  rawset(t, key, s)
  return s
end

function M.is_spy(v) return type(v) == "table" and getmetatable(v) == spy_mt end
M.spy_mt = spy_mt

return setmetatable(M, { __call = function(_, callback) return M.new(callback) end })
