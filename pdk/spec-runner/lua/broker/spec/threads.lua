-- ngx.thread in a spec's own code (written for broker from lua-nginx-module's documentation): Kong in process
-- answers one request at a time, so a light thread a spec spawns runs to its end at once, its requests going to
-- Kong in process in order; `wait` hands back its results (true and its values, or false and its error), as
-- OpenResty's does once a thread has ended. A plugin's own ngx.thread is still not emulated (it raises).
local M = {}

-- the coroutines that are the spec's (its run and the threads it spawned), weakly held
local ours = setmetatable({}, { __mode = "k" })
local Thread = { __name = "thread" }
Thread.__index = Thread

local function thread_arg(t, fn)
  if getmetatable(t) ~= Thread then error("bad argument #1 to '" .. fn .. "' (ngx.thread expected)", 3) end
  return t
end

--- ngx.thread for the spec's coroutine `main` and the threads it spawns; plugins keep the one they had.
function M.install(main)
  ours[main] = true
  local plugin_side = ngx.thread
  ngx.thread = {
    spawn = function(fn, ...)
      if not ours[coroutine.running()] then return plugin_side.spawn(fn, ...) end
      if type(fn) ~= "function" then error("bad argument #1 to 'spawn' (function expected)", 2) end
      local co = coroutine.create(fn)
      ours[co] = true
      -- each yield of the thread (a request to Kong in process) goes up to the host, and its answer back
      local res = table.pack(coroutine.resume(co, ...))
      while res[1] and coroutine.status(co) ~= "dead" do
        res = table.pack(coroutine.resume(co, coroutine.yield(table.unpack(res, 2, res.n))))
      end
      return setmetatable({ result = res }, Thread)
    end,
    wait = function(...)
      if not ours[coroutine.running()] then return plugin_side.wait(...) end
      if select("#", ...) == 0 then error("at least one thread expected", 2) end
      -- every thread has ended: the first one given that was not waited for is the one that "ended first"
      for i = 1, select("#", ...) do
        local t = thread_arg((select(i, ...)), "wait")
        if not t.waited then
          t.waited = true
          local r = t.result
          if not r[1] then return false, r[2] end
          return true, table.unpack(r, 2, r.n)
        end
      end
      return nil, "already waited or killed"
    end,
    kill = function(t)
      if not ours[coroutine.running()] then return plugin_side.kill(t) end
      thread_arg(t, "kill")
      if t.waited then return nil, "already waited or killed" end
      return nil, "already terminated"
    end,
  }
end

return M
