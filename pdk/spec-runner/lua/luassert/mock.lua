-- luassert's mock (written for broker): every function of a table (and of tables inside it) made a
-- spy, or a stub when asked; mock.revert puts the functions back.
local spy = require "luassert.spy"
local stub = require "luassert.stub"
local M = {}

local function walk(t, dostub, seen)
  seen = seen or {}
  if seen[t] then return t end
  seen[t] = true
  for k, v in pairs(t) do
    if type(v) == "function" or spy.is_spy(v) then
      if not spy.is_spy(v) then
        if dostub then stub(t, k) else spy.on(t, k) end
      end
    elseif type(v) == "table" then
      walk(v, dostub, seen)
    end
  end
  return t
end

function M.revert(t, seen)
  seen = seen or {}
  if seen[t] then return t end
  seen[t] = true
  for _, v in pairs(t) do
    if spy.is_spy(v) then v:revert() elseif type(v) == "table" then M.revert(v, seen) end
  end
  return t
end

return setmetatable(M, { __call = function(_, t, dostub) return walk(t, dostub) end })
