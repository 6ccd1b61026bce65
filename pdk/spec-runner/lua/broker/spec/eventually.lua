-- Kong's assert.eventually (spec.helpers' wait helpers, written for broker from their documented use):
--   assert.with_timeout(s).with_step(s).with_max_tries(n).ignore_exceptions(b)
--     .eventually(fn).is_truthy(msg) / .is_falsy(msg) / .has_error(msg) / .has_no_error(msg)
-- calls fn until the condition holds, or fails once the timeout (5 s) has passed on the spec's clock or
-- max_tries calls were made. Nothing waits: between calls the clock moves on by the step (0.05 s).
local L = require "luassert"
local assert = L.assert
local timers = require "broker.spec.timers"

local SETTINGS = { with_timeout = "timeout", with_step = "step", with_max_tries = "max_tries",
  ignore_exceptions = "ignore_exceptions", with_debug = "debug" }
for modifier, key in pairs(SETTINGS) do
  assert:register("modifier", modifier, function(state, args) rawset(state, "wait_" .. key, args[1]) end)
end

-- whether one call's outcome meets the condition; an error fails truthy and falsy at once unless ignored
local MET = {
  truthy = function(ok, v) return ok and not not v end,
  falsy = function(ok, v) return ok and not v end,
  error = function(ok) return not ok end,
  no_error = function(ok) return ok end,
}

local function waiter(fn, o)
  local function run(condition, message)
    local tries, waited, last = 0, 0, nil
    while true do
      tries = tries + 1
      local ok, v = pcall(fn)
      if MET[condition](ok, v) then return true end
      if not ok then
        last = type(v) == "table" and v.message or tostring(v)
        if (condition == "truthy" or condition == "falsy") and not o.ignore_exceptions then
          L.fail((message or "assert.eventually") .. ": the function raised an error: " .. last)
        end
      else
        last = "returned " .. tostring(v)
      end
      local why = waited >= o.timeout and ("timed out after " .. o.timeout .. " seconds")
        or (o.max_tries and tries >= o.max_tries and ("gave up after " .. tries .. " tries"))
      if why then
        L.fail((message or "assert.eventually") .. ": " .. why .. " waiting for the function to be " .. condition
          .. " (last: " .. tostring(last) .. ")")
      end
      local step = math.min(o.step, o.timeout - waited)
      if step > 0 then ngx.sleep(step) end
      timers.run()
      waited = waited + math.max(step, 0)
    end
  end
  return {
    is_truthy = function(m) return run("truthy", m) end,
    is_falsy = function(m) return run("falsy", m) end,
    has_error = function(m) return run("error", m) end,
    has_no_error = function(m) return run("no_error", m) end,
  }
end

assert:register("assertion", "eventually", function(state, args)
  local fn = args[1]
  if type(fn) ~= "function" then error("assert.eventually() takes a function, got " .. type(fn), 4) end
  local o = {
    timeout = tonumber(rawget(state, "wait_timeout")) or 5,
    step = tonumber(rawget(state, "wait_step")) or 0.05,
    max_tries = tonumber(rawget(state, "wait_max_tries")),
    ignore_exceptions = rawget(state, "wait_ignore_exceptions") == true,
  }
  return true, { n = 1, waiter(fn, o) }
end)
