-- luassert's matchers (written for broker): values that stand for "any value passing this check"
-- in called_with, same and stubs' on_call_with. match._ is any value; match.is_<assertion>(...)
-- (and match.is_not_…) turns any registered assertion into one; a few are matchers of their own.
local util = require "luassert.util"
local M = {}

local matcher_mt = { __broker_matcher = true }
matcher_mt.__call = function(self, value) return self.check(value) end
matcher_mt.__tostring = function(self) return self.name end

local function matcher(name, check) return setmetatable({ name = name, check = check }, matcher_mt) end
M.is_matcher = util.is_matcher

local own = {}
own._ = function() return matcher("_", function() return true end) end
own.is_ref = function(ref) return matcher("is_ref", function(v) return rawequal(v, ref) end) end
own.none_of = function(...)
  local ms = { ... }
  return matcher("none_of", function(v) for _, m in ipairs(ms) do if m(v) then return false end end return true end)
end
own.any_of = function(...)
  local ms = { ... }
  return matcher("any_of", function(v) for _, m in ipairs(ms) do if m(v) then return true end end return false end)
end
own.all_of = function(...)
  local ms = { ... }
  return matcher("all_of", function(v) for _, m in ipairs(ms) do if not m(v) then return false end end return true end)
end

function M._register(name, builder) own[name:lower()] = builder end

-- match.is_string(), match.is_not_nil(), match.same({...}), match.matches("^a"): the assertion
-- of that name with the value tried in the actual's place (after the expected arguments)
local function from_assertion(key)
  local a = require("luassert")
  local words, positive = {}, true
  for w in key:lower():gmatch("[^_]+") do words[#words + 1] = w end
  local name
  for i = 1, #words do
    local rest = table.concat(words, "_", i)
    if a.registry.assertion[rest] then name = rest break end
    if words[i] == "not" or words[i] == "no" then positive = not positive end
  end
  if not name then return nil end
  local entry = a.registry.assertion[name]
  return function(...)
    local expected = { n = select("#", ...), ... }
    return matcher(key, function(value)
      local args = { n = expected.n + 1 }
      for i = 1, expected.n do args[i] = expected[i] end
      -- the value goes where the assertion reads the actual one: last of the expected ones
      if entry.actual_first then
        table.insert(args, 1, value)
      else
        args[expected.n + 1] = value
      end
      local ok = entry.callback(setmetatable({ mod = positive, tokens = {} }, {}), args, 2)
      return (not not ok) == positive
    end)
  end
end

M._ = own._()
return setmetatable(M, {
  __index = function(t, key)
    if type(key) ~= "string" then return nil end
    if own[key] then return own[key] end
    local f = from_assertion(key)
    if f then rawset(t, key, f) end
    return f
  end,
})
