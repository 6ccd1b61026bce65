-- The entry points the host calls to run one spec file (written for broker): __spec_start runs it in
-- a coroutine with busted's globals; a yield hands the host a tick (a test starts: its deadline) or
-- a request (a proxied call of spec.helpers); __spec_resume carries the host's answer back.
local core = require "busted.core"
local L = require "luassert"

local co

local function set(list)
  if not list then return nil end
  local s = {}
  for _, v in ipairs(list) do s[v] = true end
  return s
end

local function step(ok, kind, ...)
  if not ok then return "error", tostring(kind) end
  if coroutine.status(co) == "dead" then return "done", kind end
  return kind, ...
end

function __spec_start(source, chunkname, opts)
  opts = opts or {}
  for k, v in pairs(core.api(opts.lazy)) do _G[k] = v end
  _G.assert = L.assert
  require("broker.spec.timers").install()
  -- timers run here, so kong.tools.queue hands its batches to the plugin's handler (http-log, datadog)
  require("kong.tools.queue").sends = true
  -- kong.log.trace writes at debug level while Kong's tests run (KONG_IS_TESTING), as here
  require("broker.kong").testing = true
  -- real connections (a plugin's Redis): ngx.socket.tcp through the host
  require("broker.spec.sockets").install()
  -- broker pdk test --record: each proxied request carries what its fixture needs
  require("broker.spec.client").recording = opts.record == true
  require("broker.spec.logfile").install()
  -- Schema.new(plugin schema):validate(entity), which schema specs call without spec.helpers
  require("broker.spec.errors").install_schema_validate()
  -- plugins share this VM's globals, so a plugin's sandbox (Kong's kong.tools.sandbox protects every
  -- table it copies from _G) would take luassert's metatable off `assert`: its metatable stays
  local setmt, the_assert = setmetatable, L.assert
  _G.setmetatable = function(t, mt)
    if rawequal(t, the_assert) then return t end
    return setmt(t, mt)
  end
  _G.spy = require "luassert.spy"
  _G.stub = require "luassert.stub"
  _G.mock = require "luassert.mock"
  _G.match = require "luassert.match"
  _G.print = function(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
    __spec_print(table.concat(parts, "\t"))
  end
  local options = {
    tags = set(opts.tags), exclude_tags = set(opts.exclude_tags), filter = opts.filter, filter_out = opts.filter_out,
  }
  co = coroutine.create(function()
    require("broker.spec.threads").install(coroutine.running())
    local chunk, err = load(source, "@" .. chunkname, "t")
    if not chunk then
      local line = tonumber(tostring(err):match(":(%d+):")) or 0
      return setmetatable({ {
        status = "error", name = chunkname, file = chunkname, line = line, descriptor = "file", duration = 0,
        message = tostring(err), trace = { short_src = chunkname, currentline = line, traceback = "" },
      } }, __broker_array_mt)
    end
    return setmetatable(core.run_file(chunk, "@" .. chunkname, options), __broker_array_mt)
  end)
  return step(coroutine.resume(co))
end

function __spec_resume(...)
  return step(coroutine.resume(co, ...))
end
