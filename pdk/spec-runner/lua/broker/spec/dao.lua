-- db.<entity> of spec.helpers' get_db_utils (written for broker): Kong's DAO methods on the rows of
-- db.lua, answering as Kong's DAO does (the row, or nil, the error's message and its table). What is
-- not written here (select_by_<field>, each_for_<foreign>, page_for_<foreign>, cache_key) is
-- kong.db's own (broker.db), on the same rows.
local store = require "broker.db"
local rows = require "broker.spec.db"
local M = {}

local present = require("broker.spec.entities").present

-- Kong's DAO answer: the row as stored (its transformations applied), or nil, the message and the error
local function answer(name, row, err_t)
  if not row then return nil, "[postgres] " .. err_t.message, err_t end
  return present(name, row)
end

local Dao = {}
Dao.__index = function(self, key)
  if Dao[key] then return Dao[key] end
  local own = store.db[self.name][key]
  if type(own) ~= "function" then return own end
  return function(_, ...) return own(store.db[self.name], ...) end
end
function Dao:insert(row, options)
  return answer(self.name, rows.try_insert(self.name, rows.with_options(row, options)))
end
function Dao:select(pk)
  local row = rows.find(self.name, pk)
  return row and present(self.name, row) or nil
end
function Dao:update(pk, patch, options) return answer(self.name, rows.update(self.name, pk, patch, options)) end
function Dao:upsert(pk, row) return answer(self.name, rows.upsert(self.name, pk, row)) end
function Dao:delete(pk)
  local ok, err_t = rows.delete(self.name, pk)
  if not ok then return nil, "[postgres] " .. err_t.message, err_t end
  return true
end
function Dao:truncate() rows.truncate(self.name) return true end
function Dao:each()
  local list, i = rows.rows(self.name), 0
  return function() i = i + 1 local r = list[i] if r then return r end end
end
function Dao:page()
  local out = {}
  for i, r in ipairs(rows.rows(self.name)) do out[i] = r end
  return out
end
-- select_by_<field> and the other finders: broker.db's, which read the rows as plugins see them
-- (transformations applied); update_by_/delete_by_ find the row first
function Dao:update_by(field, value, patch)
  for _, r in ipairs(rows.rows(self.name)) do if r[field] == value then return self:update(r, patch) end end
  return nil, "[postgres] could not find the entity", nil
end

M.db = setmetatable({
  truncate = function(_, name) rows.truncate(name) return true end,
  reset = function() rows.truncate() return true end,
  connect = function() return true end,
  close = function() return true end,
  strategy = "postgres",
  connector = require("broker.spec.connector").connector,
}, { __index = function(t, name)
  if type(name) ~= "string" or name == "daos" then return nil end
  local info = require("broker.spec.entities").info(name)
  local schema = { name = name, admin_api_name = info.api, endpoint_key = info.endpoint_key,
    fields = info.def and info.def.fields or {} }
  function schema.validate_insert(_, entity) return require("broker.spec.entities").validate_insert(name, entity) end
  local d = setmetatable({ name = name, schema = schema }, Dao)
  rawset(t, name, d)
  return d
end })

-- db.daos: every entity's DAO (Kong's core ones and the loaded plugins'), as Kong's spec fixtures walk them
local CORE = { "services", "routes", "consumers", "plugins" }
M.db.daos = setmetatable({}, {
  __index = function(_, name) return M.db[name] end,
  __pairs = function()
    local names = {}
    for _, n in ipairs(CORE) do names[#names + 1] = n end
    local plugins = {}
    for n in pairs(require("broker.spec.entities").daos()) do plugins[#plugins + 1] = n end
    table.sort(plugins)
    for _, n in ipairs(plugins) do names[#names + 1] = n end
    local i = 0
    return function()
      i = i + 1
      if names[i] then return names[i], M.db[names[i]] end
    end, nil, nil
  end,
})

-- a plugin's kong.db is the spec's Postgres: its strategy, and a connector that runs the statements
-- the bundled plugins send (rate-limiting's cluster policy)
store.db.strategy = "postgres"
store.db.connector = M.db.connector

-- a plugin's kong.db writes (oauth2 issuing a token) land in the same rows, invalidating the node cache as
-- Kong's crud events do (db.lua's changed)
store.writer = function(name, op, ...)
  rows.crud_events = true
  local out = table.pack(pcall(M.db[name][op], M.db[name], ...))
  rows.crud_events = false
  if not out[1] then error(out[2], 0) end
  return table.unpack(out, 2, out.n)
end

--- Every row, for a request the host routes (routes, services, plugins, consumers).
-- A plugin's row as Kong's proxy reads it from the database: a required field of its config stored as null (a row
-- written in SQL) reads as its default, as the Admin API shows it. Kept per row and config, so the plugin's config
-- stays the same table from request to request.
local as_read = setmetatable({}, { __mode = "k" })
local function read_plugin(row)
  if type(row.config) ~= "table" then return row end
  local kept = as_read[row]
  if kept and kept.from == row.config then return kept.row end
  local ok, schema = pcall(require, "kong.plugins." .. tostring(row.name) .. ".schema")
  local config = ok and type(schema) == "table" and require("broker.schema").as_read(schema, row.config) or row.config
  local read = row
  if config ~= row.config then
    read = {}
    for k, v in pairs(row) do read[k] = v end
    read.config = config
  end
  as_read[row] = { from = row.config, row = read }
  return read
end

function M.snapshot()
  local plugins = rows.rows("plugins")
  local read
  for i, row in ipairs(plugins) do
    local r = read_plugin(row)
    if r ~= row then
      read = read or { table.unpack(plugins) }
      read[i] = r
    end
  end
  return { routes = rows.rows("routes"), services = rows.rows("services"), plugins = read or plugins,
    consumers = rows.rows("consumers"), upstreams = rows.rows("upstreams"), targets = rows.rows("targets") }
end

return M
