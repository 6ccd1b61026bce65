-- Per-request state of the Lua face and the phase runner: each plugin phase runs in a coroutine,
-- so kong.response.exit (and a kit call JS must await) can leave it, as Kong's runloop does.
local M = { EXIT = {}, AWAIT = {} }
local EXIT, AWAIT = M.EXIT, M.AWAIT
local traceback, create, resume, status = debug.traceback, coroutine.create, coroutine.resume, coroutine.status

M.current = { shared = {}, plugin = {}, ngx = {} }
-- ngx.arg in body_filter: the chunk and whether it is the last
M.arg = {}
M.plugin_index = nil

--- A fresh request: kong.ctx.shared, kong.ctx.plugin and ngx.ctx start empty.
-- kong.ctx.shared: Lua values stay Lua values; every write also reaches the kit's shared store,
-- and a key only a JS plugin set is read from there, so JS and Lua plugins share one state
-- whether a value can cross to JS as data: a table that holds itself (a session object, a DAO row with
-- its schema) stays a Lua value only, since crossing it would never end
local function crossable(v, seen, depth)
  if type(v) ~= "table" then return true end
  if seen[v] or depth > 50 then return false end
  seen[v] = true
  for k, x in next, v do
    if not crossable(k, seen, depth + 1) or not crossable(x, seen, depth + 1) then return false end
  end
  seen[v] = nil
  return true
end

local function shared_table()
  local own = {}
  return setmetatable({}, {
    __index = function(_, k)
      local v = own[k]
      if v == nil and type(k) == "string" then v = __host("shared_get", k) end
      return v
    end,
    __newindex = function(_, k, v)
      own[k] = v
      if type(k) == "string" and crossable(v, {}, 0) then pcall(__host, "shared_set", k, v) end
    end,
    __pairs = function() return next, own, nil end,
  })
end

function M.begin(captures)
  -- every replay starts from the fixture's rows and an empty node cache (a started Kong keeps its cache)
  require("broker.db").begin_request()
  M.current = { shared = shared_table(), plugin = {}, ngx = require("broker.ngx_ctx").new(captures), core = {} }
  M.shared_dict_time = nil
end

function M.plugin_ctx()
  local i = M.plugin_index
  if not i then return nil end
  local t = M.current.plugin[i]
  if not t then t = {}; M.current.plugin[i] = t end
  return t
end

local running = {}
local handlers, confs, names = {}, {}, {}
M.handlers, M.confs, M.names = handlers, confs, names

local function finish(token, co, ok, res, ...)
  if not ok then
    running[token] = nil
    local msg = res
    if type(msg) == "table" then msg = msg.message or tostring(msg) end
    return "error", traceback(co, tostring(msg))
  end
  if status(co) == "dead" then running[token] = nil return "done", res, ... end
  if res == EXIT then running[token] = nil return "exit" end
  if res == AWAIT then return "await" end
  -- a plugin that yields on its own (outside a coroutine of its own) is resumed at once
  return "yield"
end

--- The configs of every instance of plugin `i`'s name, as Kong hands them to `configure`.
local function configs_of(i)
  local slots, list = {}, {}
  for j in pairs(confs) do
    if names[j] == names[i] then slots[#slots + 1] = j end
  end
  table.sort(slots)
  for n, j in ipairs(slots) do list[n] = confs[j] end
  return list
end

--- Starts plugin `i`'s phase handler in a coroutine; "done", "exit", "await" or "error", traceback.
-- As Kong calls them: init_worker(self), configure(self, configs), a request phase(self, conf).
function M.start(token, i, phase)
  M.plugin_index = i
  local h = handlers[i]
  local co = create(h[phase])
  running[token] = co
  if phase == "init_worker" then return finish(token, co, resume(co, h)) end
  if phase == "configure" then return finish(token, co, resume(co, h, configs_of(i))) end
  return finish(token, co, resume(co, h, confs[i]))
end

--- Resumes a phase that waited on JS, with what JS answered.
function M.resume(token, i, ...)
  M.plugin_index = i
  local co = running[token]
  return finish(token, co, resume(co, ...))
end

--- Runs `fn(...)` in a coroutine as a phase handler runs (a plugin's own Admin API route): the same states.
function M.run(token, fn, ...)
  M.plugin_index = nil
  local co = create(fn)
  running[token] = co
  return finish(token, co, resume(co, ...))
end

--- Calls kong.<path>(...) in a coroutine of its own, as a plugin's line would (call scripts through Lua).
function M.call(token, path, ...)
  local fn = kong
  -- the JS kit's kong.ctx.shared.get/set are a Lua plugin's table reads and writes
  if path == "ctx.shared.get" or path == "shared.get" then
    fn = function(k) return kong.ctx.shared[k] end
  elseif path == "ctx.shared.set" or path == "shared.set" then
    fn = function(k, v) kong.ctx.shared[k] = v end
  end
  for seg in (fn == kong and path or ""):gmatch("[^.]+") do
    fn = fn[seg]
    if fn == nil then return "error", "kong." .. path .. " is nil" end
  end
  local co = create(function(...) return fn(...) end)
  running[token] = co
  return finish(token, co, resume(co, ...))
end

function M.abandon(token) running[token] = nil end

return M
