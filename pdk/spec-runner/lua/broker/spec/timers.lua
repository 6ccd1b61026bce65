-- ngx.timer.at for Kong in process (written for broker): a plugin's timer with no delay (rate-limiting
-- counting a request) runs once the request is answered, before the spec's next line, as it would in
-- Kong soon after; a delayed one runs the first time this is asked once the spec's clock has passed it
-- (ngx.sleep, wait_until). ngx.timer.every never fires.
local M = { queue = {} }

function M.install()
  ngx.timer.at = function(delay, fn, ...)
    if type(fn) ~= "function" then return nil, "bad argument #2 to 'ngx.timer.at' (function expected)" end
    local t = table.pack(fn, ...)
    t.due = ngx.now() + math.max(tonumber(delay) or 0, 0)
    M.queue[#M.queue + 1] = t
    return true
  end
end

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
  while n < 1000 do
    local t = next_due()
    if not t then break end
    n = n + 1
    local ok, err = pcall(t[1], false, table.unpack(t, 2, t.n))
    if not ok then
      require("broker.spec.logfile").append({ os.date("%Y/%m/%d %H:%M:%S") .. " [error] 1#0: *1 lua entry thread aborted: "
        .. "runtime error: " .. tostring(err) .. ", context: ngx.timer" })
    end
  end
end

return M
