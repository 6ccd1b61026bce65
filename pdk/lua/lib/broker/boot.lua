-- Boots a VM for Kong plugins: `require` through the host's search path, the ngx and kong
-- globals, and the entry points the host calls (__broker_*).
local find = __find

-- the modules being loaded, outermost first: a module found nowhere is reported with the chain that
-- required it (kong.plugins.x.handler → kong.tools.utils → ffi)
local loading = {}
local raw_require, pcall, error = require, pcall, error
-- the modules loaded from a file that is not broker's (the plugin's, Kong's checkout, a rock): the code a Kong
-- started again loads afresh (spec.helpers' start_kong), where broker's emulation keeps its state
__broker_user_modules = {}
require = function(name)
  local loaded = package.loaded[name]
  if loaded ~= nil then return loaded end
  loading[#loading + 1] = tostring(name)
  local ok, mod, extra = pcall(raw_require, name)
  loading[#loading] = nil
  if not ok then error(mod, 0) end
  return mod, extra
end

package.searchers = {
  package.searchers[1],
  function(name)
    local src, where = find(name, table.concat(loading, " → "))
    if not src then return where end
    local f, err = load(src, "@" .. where, "t")
    if not f then error(err, 0) end
    if where:sub(1, 7) ~= "broker:" then __broker_user_modules[name] = true end
    return f, where
  end,
}
package.path, package.cpath = "", ""

-- the marker cjson gives an array (so {} encodes as []); the host looks it up by this name
__broker_array_mt = { __name = "array_mt" }

local R

function __broker_boot(extra)
  require "broker.io"
  require("broker.db").init(extra.db)
  ngx = require "broker.ngx"
  -- the fixture's ngx_shared: a value, or { value, ttl, flags }, per key of each dictionary
  for name, entries in pairs(extra.ngx_shared or {}) do
    local dict = ngx.shared[name]
    for key, e in pairs(entries) do
      if type(e) == "table" then dict:set(key, e.value, e.ttl, e.flags) else dict:set(key, e) end
    end
  end
  kong = require("broker.kong").build(extra)
  R = require "broker.request"
end

local PHASES = { "init_worker", "configure", "certificate", "rewrite", "access", "header_filter", "body_filter", "log", "response", "preread" }

-- Kong loads plugins' files in nginx's init phase: ngx.get_phase() at a module's top level answers "init"
-- (prometheus starts its counters in init_worker only when it is not loaded there). A load that fails
-- leaves the flag up; the next request's start clears it.
local function require_in_init(name)
  __broker_loading = true
  local mod = require(name)
  __broker_loading = false
  return mod
end

--- Loads plugin `name`'s handler into slot i with its config; PRIORITY, VERSION, phases.
function __broker_load(i, name, conf)
  local handler = require_in_init("kong.plugins." .. name .. ".handler")
  if type(handler) ~= "table" then
    error("kong.plugins." .. name .. ".handler returned " .. type(handler) .. ", not a handler table", 0)
  end
  -- Kong hands a plugin its config as its schema reads the row: nulls as nil, the vault references resolved
  local ok, schema = pcall(require, "kong.plugins." .. name .. ".schema")
  if ok then conf = require("broker.select").config(schema, conf) end
  R.handlers[i], R.confs[i], R.names[i] = handler, conf, name
  local phases = {}
  for _, p in ipairs(PHASES) do
    if type(handler[p]) == "function" then phases[#phases + 1] = p end
  end
  return handler.PRIORITY, handler.VERSION, setmetatable(phases, __broker_array_mt)
end

--- Fills a config's defaults and checks it against the plugin's schema.lua (when it has one).
function __broker_schema(name, conf)
  local ok, schema = pcall(require_in_init, "kong.plugins." .. name .. ".schema")
  __broker_loading = false
  if not ok then
    if tostring(schema):find("module 'kong.plugins." .. name .. ".schema' not found", 1, true) then return conf end
    error(schema, 0)
  end
  return require("broker.schema").process(schema, conf)
end

--- The field names of a record of a plugin's config (see broker.schema.field_names); none without a schema.lua.
function __broker_schema_fields(name, path)
  local ok, schema = pcall(require, "kong.plugins." .. name .. ".schema")
  local names = ok and require("broker.schema").field_names(schema, path) or {}
  return setmetatable(names, __broker_array_mt)
end

function __broker_begin(captures) __broker_loading = false R.begin(captures) end
function __broker_start(token, i, phase) __broker_loading = false return R.start(token, i, phase) end
function __broker_resume(token, i, ...) return R.resume(token, i, ...) end
function __broker_set_arg(chunk, eof) R.arg[1], R.arg[2] = chunk, eof end
function __broker_get_arg() return R.arg[1] end
function __broker_call(token, path, ...) return R.call(token, path, ...) end
