-- The database of spec.helpers (written for broker): Kong's entities kept in memory, in the same
-- rows kong.db reads inside a plugin (broker.db's tables); `bp` (blueprints) inserts rows with
-- Kong's defaults, `db` reads and writes them. A plugin row's config is checked against its
-- schema.lua and filled with its defaults on insert, as Kong's DAO does.
local store = require "broker.db"
local uuid = require("kong.tools.uuid").uuid
local null = ngx.null
local M = {}

M.MOCK_HOST, M.MOCK_PORT = "127.0.0.1", 15555

local function now() return os.time() end

local function rows(name)
  store.given[name] = store.given[name] or {}
  return store.given[name]
end

local function changed() store.reset() end

--- Forgets every row (get_db_utils truncates the tables it is given, or all of them).
function M.truncate(name)
  if name then store.given[name] = {} else for k in pairs(store.given) do store.given[k] = nil end end
  changed()
end

local function parse_url(url)
  local protocol, host, port, path = url:match("^(%a[%w+.-]*)://([^:/?#]+):?(%d*)([^?#]*)")
  if not protocol then error("invalid url: " .. tostring(url), 4) end
  port = tonumber(port) or (protocol == "https" and 443 or 80)
  return protocol, host, port, path ~= "" and path or nil
end

local function ref(v)
  if v == nil or v == null then return v end
  if type(v) == "table" then return { id = v.id } end
  return { id = v }
end

-- a plugin's own DAOs (daos.lua): fields with defaults, `auto` ones generated
local function dao_defaults(name, row)
  for plugin in pairs(M.plugins or {}) do
    local ok, daos = pcall(require, "kong.plugins." .. plugin .. ".daos")
    if ok and type(daos) == "table" then
      for _, d in ipairs(daos[1] and daos or { daos }) do
        if d.name == name then
          for _, f in ipairs(d.fields or {}) do
            local fname, def = next(f)
            if row[fname] == nil then
              if def.auto and def.type == "string" then row[fname] = uuid()
              elseif def.default ~= nil then row[fname] = def.default end
            end
            if def.type == "foreign" then row[fname] = ref(row[fname]) end
          end
        end
      end
    end
  end
end

local DEFAULTS = {}
function DEFAULTS.services(row)
  if row.url then
    row.protocol, row.host, row.port, row.path = parse_url(row.url)
    row.url = nil
  end
  row.protocol = row.protocol or "http"
  row.host = row.host or M.MOCK_HOST
  row.port = row.port or (row.host == M.MOCK_HOST and M.MOCK_PORT or (row.protocol == "https" and 443 or 80))
  row.retries = row.retries or 5
  row.connect_timeout = row.connect_timeout or 60000
  row.write_timeout = row.write_timeout or 60000
  row.read_timeout = row.read_timeout or 60000
  if row.enabled == nil then row.enabled = true end
end
function DEFAULTS.routes(row, insert)
  row.protocols = row.protocols or { "http", "https" }
  row.regex_priority = row.regex_priority or 0
  if row.strip_path == nil then row.strip_path = true end
  if row.preserve_host == nil then row.preserve_host = false end
  row.https_redirect_status_code = row.https_redirect_status_code or 426
  row.path_handling = row.path_handling or "v0"
  if row.request_buffering == nil then row.request_buffering = true end
  if row.response_buffering == nil then row.response_buffering = true end
  -- Kong's test blueprints give a route without a service one of its own, to the mock upstream
  if row.service == nil then row.service = { id = insert("services", {}).id } end
  row.service = ref(row.service)
end
function DEFAULTS.plugins(row)
  if type(row.name) ~= "string" then error("schema violation (name: required field missing)", 4) end
  local ok, schema = pcall(require, "kong.plugins." .. row.name .. ".schema")
  if not ok then
    error("schema violation (name: plugin '" .. row.name .. "' not enabled; add it to the 'plugins' configuration property)", 4)
  end
  local conf, errs = require("broker.schema").process(schema, row.config or {})
  if errs then
    local list = {}
    for k, m in pairs(errs) do list[#list + 1] = ((k == "@entity" or k == "@config") and "config" or ("config." .. k)) .. ": " .. tostring(m) end
    table.sort(list)
    error("schema violation (" .. table.concat(list, "; ") .. ")", 4)
  end
  row.config = conf
  if row.enabled == nil then row.enabled = true end
  row.protocols = row.protocols or { "grpc", "grpcs", "http", "https" }
  row.route, row.service, row.consumer = ref(row.route), ref(row.service), ref(row.consumer)
end

--- Inserts a row into `name` with Kong's defaults; the row.
function M.insert(name, given)
  local row = {}
  for k, v in pairs(given or {}) do row[k] = v end
  row.id = row.id or uuid()
  row.created_at = row.created_at or now()
  row.updated_at = row.updated_at or row.created_at
  if DEFAULTS[name] then DEFAULTS[name](row, M.insert) else dao_defaults(name, row) end
  local list = rows(name)
  for _, r in ipairs(list) do
    if r.id == row.id then error("UNIQUE violation detected on '{id=\"" .. row.id .. "\"}'", 3) end
  end
  list[#list + 1] = row
  changed()
  return row
end

local function find(name, pk)
  local id = type(pk) == "table" and pk.id or pk
  for i, r in ipairs(rows(name)) do if r.id == id then return r, i end end
end

-- bp.<name>: insert, insert_n, remove
local Blueprint = {}
Blueprint.__index = Blueprint
function Blueprint:insert(row) return M.insert(self.name, row) end
function Blueprint:insert_n(n, row)
  local out = {}
  for i = 1, n do out[i] = M.insert(self.name, row) end
  return out
end
function Blueprint:remove(pk)
  local _, i = find(self.name, pk)
  if i then table.remove(rows(self.name), i) changed() end
end

M.bp = setmetatable({}, { __index = function(t, name)
  local b = setmetatable({ name = name }, Blueprint)
  rawset(t, name, b)
  return b
end })

-- db.<name>: Kong's DAO methods on the same rows (select, select_by_<unique field>, update …)
local Dao = {}
-- what is not written here (select_by_<field>, each_for_<foreign>, cache_key) is kong.db's own
Dao.__index = function(self, key)
  if Dao[key] then return Dao[key] end
  local own = store.db[self.name][key]
  if type(own) ~= "function" then return own end
  return function(_, ...) return own(store.db[self.name], ...) end
end
function Dao:insert(row)
  local ok, res = pcall(M.insert, self.name, row)
  if not ok then return nil, tostring(res) end
  return res
end
function Dao:select(pk) return (find(self.name, pk)) end
function Dao:update(pk, patch)
  local r = find(self.name, pk)
  if not r then return nil, "could not find the entity with primary key '{id=\"" .. tostring(pk.id or pk) .. "\"}'" end
  for k, v in pairs(patch) do r[k] = v end
  if self.name == "plugins" and patch.config then DEFAULTS.plugins(r) end
  r.updated_at = now()
  changed()
  return r
end
function Dao:upsert(pk, row)
  if find(self.name, pk) then return self:update(pk, row) end
  local copy = {}
  for k, v in pairs(row) do copy[k] = v end
  copy.id = type(pk) == "table" and pk.id or pk
  return self:insert(copy)
end
function Dao:delete(pk)
  local _, i = find(self.name, pk)
  if i then table.remove(rows(self.name), i) changed() end
  return true
end
function Dao:truncate() M.truncate(self.name) return true end
function Dao:each()
  local list, i = rows(self.name), 0
  return function() i = i + 1 local r = list[i] if r then return r end end
end
function Dao:page()
  local out = {}
  for i, r in ipairs(rows(self.name)) do out[i] = r end
  return out
end

M.db = setmetatable({
  truncate = function(_, name) M.truncate(name) return true end,
  reset = function() M.truncate() return true end,
  connect = function() return true end,
  close = function() return true end,
  strategy = "postgres",
}, { __index = function(t, name)
  if type(name) ~= "string" then return nil end
  local d = setmetatable({ name = name, schema = { name = name } }, Dao)
  rawset(t, name, d)
  return d
end })

--- Every row, for a request the host routes (routes, services, plugins, consumers).
function M.snapshot()
  return { routes = rows("routes"), services = rows("services"), plugins = rows("plugins"), consumers = rows("consumers") }
end

return M
