-- ngx.timer.at for Kong in process (written for broker): a plugin's timer with no delay (rate-limiting
-- counting a request) runs once the request is answered, before the spec's next line, as it would in
-- Kong soon after; a delayed or repeating timer never fires (time does not pass in process).
local M = { queue = {} }

function M.install()
  ngx.timer.at = function(delay, fn, ...)
    if type(fn) ~= "function" then return nil, "bad argument #2 to 'ngx.timer.at' (function expected)" end
    if (tonumber(delay) or 0) <= 0 then M.queue[#M.queue + 1] = table.pack(fn, ...) end
    return true
  end
end

--- Runs the timers queued so far (and those they queue); a failing one is logged as Kong logs it.
function M.run()
  local n = 0
  while #M.queue > 0 and n < 1000 do
    local t = table.remove(M.queue, 1)
    n = n + 1
    local ok, err = pcall(t[1], false, table.unpack(t, 2, t.n))
    if not ok then
      require("broker.spec.logfile").append({ os.date("%Y/%m/%d %H:%M:%S") .. " [error] 1#0: *1 lua entry thread aborted: "
        .. "runtime error: " .. tostring(err) .. ", context: ngx.timer" })
    end
  end
end

return M
