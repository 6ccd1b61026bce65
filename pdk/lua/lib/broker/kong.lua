-- The `kong` global: the emulated kit (a JS function, __kit) seen with Lua's shapes.
-- Only what must hold Lua values or control flow lives here: ctx tables, exit as a yield,
-- case-insensitive header tables, kong.table, kong.db / kong.cache, kong.configuration.
local K, KID, KA = __kit, __kit_id, __kit_as
local yield, getinfo, error, select, type = coroutine.yield, debug.getinfo, error, select, type
local R = require "broker.request"

local M = {}
local EXIT, AWAIT = R.EXIT, R.AWAIT

-- status 1: values; 2: the call ended the phase (exit); 3: JS awaits a promise; 0: a raised error
local function done(status, ...)
  if status == 1 then return ... end
  if status == 2 then return yield(EXIT) end
  if status == 3 then return done(yield(AWAIT)) end
  -- level 2: the plugin's line that called the kit, as Kong's PDK errors name it
  error((...), 2)
end
M.done = done

local function site(level)
  local info = getinfo(level, "Sl")
  if not info then return "?:?" end
  return (info.short_src:match("[^/\\]+$") or info.short_src) .. ":" .. (info.currentline or 0)
end
M.site = site

-- headers tables: lookups ignore case and treat "_" as "-", as ngx.req.get_headers' tables do
local header_mt = {
  __index = function(t, k)
    if type(k) ~= "string" then return nil end
    local norm = k:lower():gsub("_", "-")
    if norm ~= k then return rawget(t, norm) end
  end,
}
M.header_mt = header_mt
local HEADER_TABLES = {
  ["request.get_headers"] = true, ["response.get_headers"] = true, ["service.response.get_headers"] = true,
}

local function with_mt(t, ...)
  if type(t) == "table" then setmetatable(t, header_mt) end
  return t, ...
end

-- Kong's get_uri_captures copies the router's captures, whose unnamed ones include the whole match at 0, into
-- an array_mt table (JSON encodes it without the 0)
local function with_whole(t, ...)
  local c = (R.current.ngx.router_matches or {}).uri_captures
  if type(t) == "table" and type(t.unnamed) == "table" then
    if c then t.unnamed[0] = c[0] end
    setmetatable(t.unnamed, __broker_array_mt)
  end
  return t, ...
end

local function make_function(id, path)
  if path == "request.get_uri_captures" then
    return function(...) return with_whole(done(K(id, ...))) end
  end
  if path:sub(1, 4) == "log." then
    return function(...) return done(K(id, site(3), ...)) end
  end
  if HEADER_TABLES[path] then
    return function(...) return with_mt(done(K(id, ...))) end
  end
  return function(...) return done(K(id, ...)) end
end

local function module(path, own)
  return setmetatable(own or {}, {
    __index = function(t, name)
      if type(name) ~= "string" then return nil end
      local full = path == "" and name or path .. "." .. name
      local id, kind = KID(full)
      local v
      if kind == "function" then v = make_function(id, full)
      elseif kind == "module" then v = module(full)
      else return nil end
      rawset(t, name, v)
      return v
    end,
  })
end
M.module = module

--- A kit function that the trace shows as `name`: the ngx.* writes made through the kit.
function M.kit_as(name, path)
  local id = KID(path)
  return function(...) return done(KA(name, id, ...)) end
end

-- kong.log is callable (notice level) and its functions name the plugin's file:line
local log = module("log")
local notice_id = KID("log.notice")
getmetatable(log).__call = function(_, ...) return done(K(notice_id, site(3), ...)) end
-- kong.log.trace: Kong's is debug while its tests run (KONG_IS_TESTING, `broker pdk test` sets M.testing)
-- and does nothing otherwise
local debug_id = KID("log.debug")
rawset(log, "trace", function(...)
  if M.testing then return done(K(debug_id, site(3), ...)) end
end)

-- kong.table works on Lua tables, so it is Lua
local ktable = {
  new = function() return {} end,
  clear = table.clear,
  merge = function(t1, t2)
    local r = {}
    if t1 then for k, v in pairs(t1) do r[k] = v end end
    if t2 then for k, v in pairs(t2) do r[k] = v end end
    return r
  end,
}

local ctx = setmetatable({}, {
  __index = function(_, k)
    if k == "shared" then return R.current.shared end
    if k == "plugin" then return R.plugin_ctx() end
    if k == "core" then return R.current.core end
  end,
})

-- Keys Kong's configuration masks in remove_sensitive() (passwords and secrets a plugin's
-- sandboxed code must not read); pre-function hands its sandbox that masked copy.
local SENSITIVE = { pg_password = true, pg_ro_password = true, cassandra_password = true,
  proxy_server = true, declarative_config_string = true }

-- Kong's configuration table answers remove_sensitive() through its metatable, so pairs() over it
-- lists only settings.
local function with_methods(conf)
  return setmetatable(conf or {}, { __index = {
    remove_sensitive = function()
      local copy = {}
      for k, v in pairs(conf) do copy[k] = SENSITIVE[k] and "******" or v end
      return copy
    end,
  } })
end

-- broker's kong.log, which ngx.log writes through whatever a spec makes of the kong global (ai-proxy's unit spec
-- sets it to nil, or to a table of its own)
M.log = log

--- Builds the kong global; `extra` holds the fields the host gives (configuration, version).
function M.build(extra)
  local kong = module("", {
    ctx = ctx,
    table = ktable,
    log = log,
    db = require("broker.db").db,
    cache = require("broker.db").cache,
    core_cache = require("broker.db").cache,
    configuration = with_methods(extra.configuration),
    version = extra.version,
    version_num = extra.version_num,
    pdk_major_version = 1,
    pdk_version = "1.5.0",
    worker_events = require("broker.db").worker_events,
    cluster_events = require("broker.db").cluster_events,
  })
  -- the retry callback is a Lua function, kept with the balancer's data as Kong keeps it; a replay's
  -- connection never fails, so the balancer never calls it
  rawset(kong.service, "set_target_retry_callback", function(retry_callback)
    local phase = ngx.get_phase()
    if phase ~= "access" then error("function cannot be called in " .. phase .. " phase (only in: access)", 2) end
    if type(retry_callback) ~= "function" then error("retry_callback must be a function", 2) end
    ngx.ctx.balancer_data.retry_callback = retry_callback
  end)
  -- kong.vault.try(callback, options) calls back into Lua: it runs the callback with the options, and once more
  -- with their vault references resolved afresh when the first call fails (rate-limiting's Redis auth)
  rawset(kong.vault, "try", function(callback, options)
    if type(callback) ~= "function" then error("callback must be a function", 2) end
    local res, err = callback(options)
    if res or type(options) ~= "table" or options["$refs"] == nil then return res, err end
    return callback(kong.vault.update(options))
  end)
  -- kong.response.exit returns to the plugin only when it raised; otherwise the phase ends
  return kong
end

return M
