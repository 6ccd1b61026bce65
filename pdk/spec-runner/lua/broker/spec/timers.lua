-- ngx.timer.at for Kong in process (written for broker): a plugin's timer with no delay (rate-limiting
-- counting a request) runs once the request is answered, before the spec's next line, as it would in
-- Kong soon after; a delayed one runs the first time this is asked once the spec's clock has passed it
-- (ngx.sleep, wait_until). ngx.timer.every never fires. kong.timer (Kong's resty.timerng) queues on the same
-- clock: `at` and `named_at` as ngx.timer.at; `every` runs each time its interval has passed when asked.
local M = { queue = {} }

local function queue(delay, fn, ...)
  local t = table.pack(fn, ...)
  t.due = ngx.now() + math.max(tonumber(delay) or 0, 0)
  M.queue[#M.queue + 1] = t
  return t
end

function M.install()
  ngx.timer.at = function(delay, fn, ...)
    if type(fn) ~= "function" then return nil, "bad argument #2 to 'ngx.timer.at' (function expected)" end
    queue(delay, fn, ...)
    return true
  end
  if type(kong) == "table" and kong.timer == nil then pcall(function() kong.timer = M.new() end) end
  -- a sleep lets the timers due meanwhile run, as nginx runs them while a request or a spec waits
  local sleep = ngx.sleep
  ngx.sleep = function(sec)
    sleep(sec)
    if not M.running then M.run() end
  end
end

-- a resty.timerng instance: timers by name, on the spec's clock
local Timers = {}
Timers.__index = Timers
local count = 0

--- A resty.timerng object (kong.timer is one).
function M.new() return setmetatable({ named = {} }, Timers) end
function Timers:start() return true end
function Timers:freeze() return true end
function Timers:destroy() return true end
function Timers:set_debug() return true end
function Timers:is_managed(name) return self.named[name] ~= nil end
function Timers:stats() return { sys = { running = 0, pending = #M.queue }, timers = {} } end

function Timers:named_at(name, delay, fn, ...)
  if type(fn) ~= "function" then return nil, "expected `callback` to be a function" end
  count = count + 1
  name = name or ("unix_timestamp=" .. ngx.now() .. ";counter=" .. count)
  self.named[name] = queue(delay, fn, ...)
  return name
end
function Timers:at(delay, fn, ...) return self:named_at(nil, delay, fn, ...) end

function Timers:named_every(name, interval, fn, ...)
  if type(fn) ~= "function" then return nil, "expected `callback` to be a function" end
  local args = table.pack(...)
  local this = self
  local function again(premature)
    if this.named[name] == nil then return end
    fn(premature, table.unpack(args, 1, args.n))
    this.named[name] = queue(interval, again)
  end
  count = count + 1
  name = name or ("unix_timestamp=" .. ngx.now() .. ";counter=" .. count)
  self.named[name] = queue(interval, again)
  return name
end
function Timers:every(interval, fn, ...) return self:named_every(nil, interval, fn, ...) end

function Timers:cancel(name)
  local t = self.named[name]
  if not t then return nil, "timer not found" end
  self.named[name] = nil
  for i, q in ipairs(M.queue) do if q == t then table.remove(M.queue, i) break end end
  return true
end
Timers.pause = Timers.cancel

-- the earliest timer due
local function next_due()
  local best
  for i, t in ipairs(M.queue) do
    if not best or t.due < M.queue[best].due then best = i end
  end
  if not best then return nil end
  if M.queue[best].due > ngx.now() then return nil end
  return table.remove(M.queue, best)
end

--- Runs the timers due; a failing one is logged as Kong logs it.
function M.run()
  local n = 0
  M.running = true
  while n < 1000 do
    local t = next_due()
    if not t then break end
    n = n + 1
    local mark = __spec_log_count and __spec_log_count()
    local ok, err = pcall(t[1], false, table.unpack(t, 2, t.n))
    -- what the timer logged goes to error.log, as nginx writes a timer's lines there
    if mark then require("broker.spec.logfile").append(__spec_log_lines(mark)) end
    if not ok then
      require("broker.spec.logfile").append({ os.date("%Y/%m/%d %H:%M:%S") .. " [error] 1#0: *1 lua entry thread aborted: "
        .. "runtime error: " .. tostring(err) .. ", context: ngx.timer" })
    end
  end
  M.running = false
end

return M
