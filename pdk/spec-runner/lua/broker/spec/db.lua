-- The database of spec.helpers (written for broker): Kong's entities kept in memory, in the same
-- rows kong.db reads inside a plugin (broker.db's tables); `bp` (blueprints) inserts rows with
-- Kong's defaults, `db` reads and writes them, and the Admin API (admin.lua) goes through the same
-- functions. A row is filled and checked by entities.lua; a refused one is Kong's error table.
local store = require "broker.db"
local entities = require "broker.spec.entities"
local errors = require "broker.spec.errors"
local uuid = require("kong.tools.uuid").uuid
local null = ngx.null
local M = {}

-- Kong as spec.helpers starts it keeps its node cache across requests
store.lasting_cache = true

M.MOCK_HOST, M.MOCK_PORT = entities.MOCK_HOST, entities.MOCK_PORT

local function now() return os.time() end

-- a row given a ttl is gone once the spec's clock passes it: Kong's DAO no longer finds it
local function rows(name)
  local list = store.given[name] or {}
  store.given[name] = list
  local now
  for i = #list, 1, -1 do
    local r = list[i]
    if type(r.ttl) == "number" then
      now = now or ngx.now()
      if (tonumber(r.created_at) or 0) + r.ttl <= now then table.remove(list, i) end
    end
  end
  return list
end
M.rows = rows

-- A plugin's own write in a request (M.crud_events, which dao.lua's writer sets) invalidates what Kong's crud
-- event handler does: the row's cache key as it was and as it is, a consumer's by username too. Any other change
-- (the spec's, the Admin API's) purges the whole node cache: it stands in for the invalidations of Kong's custom
-- DAOs and of plugins' own event handlers (acl's groups by consumer), which are not emulated.
local function changed(name, row, old)
  if not (M.crud_events and name) then return store.reset() end
  store.reset_rows()
  local dao = store.db[name]
  for _, r in pairs({ row, old }) do
    store.cache:invalidate(dao:cache_key(r))
    if name == "consumers" and type(r.username) == "string" then store.cache:invalidate(dao:cache_key(r.username)) end
  end
end

-- Kong's database always holds its default workspace (a truncate bootstraps it again)
local function fresh(name)
  if name ~= "workspaces" then return {} end
  return { { id = uuid(), name = "default", created_at = now(), updated_at = now(), config = {}, meta = {} } }
end

-- Kong's core entities that belong to a workspace (their rows' ws_id references it)
local WORKSPACED = { services = true, routes = true, consumers = true, plugins = true, upstreams = true, targets = true,
  certificates = true, snis = true, ca_certificates = true, vaults = true, keys = true, key_sets = true,
  filter_chains = true }

-- Whether a table's rows belong to a workspace: a core entity's, or a plugin's DAO that is workspaceable.
local function workspaced(name)
  if WORKSPACED[name] then return true end
  local info = require("broker.spec.entities").daos()[name]
  return info ~= nil and info.def.workspaceable == true
end

--- Forgets every row (get_db_utils truncates the tables it is given, or all of them).
function M.truncate(name)
  -- a table a spec dropped (connector:query("DROP TABLE …")) is there again, as after Kong's db:reset()
  if name then store.dropped[name] = nil else store.dropped = {} end
  -- Kong truncates with CASCADE: the workspaces go with every row that belongs to one
  if name == "workspaces" then
    for k in pairs(store.given) do if workspaced(k) then store.given[k] = {} end end
  end
  if name then store.given[name] = fresh(name)
  else
    for k in pairs(store.given) do store.given[k] = nil end
    store.given.workspaces = fresh("workspaces")
  end
  changed()
end

local function id_of(v) return type(v) == "table" and v.id or v end

local function find(name, pk)
  -- a primary key of several fields (rate-limiting's counters): the row that has them all
  if type(pk) == "table" and pk.id == nil then
    for i, r in ipairs(rows(name)) do
      local all = true
      for k, v in pairs(pk) do if r[k] ~= v then all = false break end end
      if all then return r, i end
    end
    return nil
  end
  local id = id_of(pk)
  for i, r in ipairs(rows(name)) do if r.id == id then return r, i end end
end
M.find = find

local function copy(t)
  local c = {}
  for k, v in pairs(t or {}) do c[k] = v end
  return c
end

-- Kong's checks a database makes: unique fields, and foreign keys that reference a row (`except`:
-- the row an update replaces)
local function constraints(name, row, except)
  local info = entities.info(name)
  for _, r in ipairs(rows(name)) do
    if r ~= except then
      if r.id == row.id then return errors.unique_violation({ id = row.id }) end
      for _, f in ipairs(info.unique or {}) do
        local v = row[f]
        if v ~= nil and v ~= null and r[f] == v then return errors.unique_violation({ [f] = v }) end
      end
    end
  end
  for field, parent in pairs(info.foreign or {}) do
    local v = row[field]
    if type(v) == "table" and v.id ~= nil and not find(parent, v.id) then
      return errors.foreign_key_violation(field, { id = v.id }, parent)
    end
  end
end

--- Inserts a row into `name` with Kong's defaults: the row, or nil and Kong's error table.
--- `blueprint` gives a route without a service one of its own (Kong's test blueprints do).
function M.try_insert(name, given, blueprint)
  local row = copy(given)
  row.id = row.id or uuid()
  row.created_at = row.created_at or now()
  if name ~= "consumers" then row.updated_at = row.updated_at or row.created_at end
  local ok, err_t = entities.prepare(name, row, blueprint and function(n, r) return M.insert(n, r) end or nil, given)
  if not ok then return nil, err_t end
  local e = constraints(name, row)
  if e then return nil, e end
  local list = rows(name)
  list[#list + 1] = row
  changed(name, row)
  return row
end

--- As try_insert, raising Kong's message (the blueprints and helpers' callers see an error).
function M.insert(name, given)
  local row, err_t = M.try_insert(name, given, true)
  if not row then error(err_t.message, 3) end
  return row
end

-- the stored row `r` becomes `row` once Kong's checks pass (a null field is one left out); `input` is what
-- the caller gave, `rbw` the row as an update reads it before writing (an upsert does not)
local function replace(name, r, row, input, rbw)
  for k, v in pairs(row) do if v == null then row[k] = nil end end
  local ok, err_t = entities.prepare(name, row, nil, input, rbw)
  if not ok then return nil, err_t end
  if name ~= "consumers" then row.updated_at = now() end
  local e = constraints(name, row, r)
  if e then return nil, e end
  local was = copy(r)
  for k in pairs(r) do r[k] = nil end
  for k, v in pairs(row) do r[k] = v end
  -- a row kept as Kong stored it (kong.db.declarative) is transformed once an update gives a transformation's input
  if entities.transforms(name, input) then store.as_stored[r] = nil end
  changed(name, r, was)
  return r
end

-- a record in a patch merges with the one stored, field by field (Kong's merge_values); arrays replace
local function is_record(v)
  return type(v) == "table" and v ~= null and next(v) ~= nil and rawget(v, 1) == nil
end
local function merge(stored, patch)
  local out = copy(stored)
  for k, v in pairs(patch) do
    if is_record(v) and is_record(out[k]) then out[k] = merge(out[k], v) else out[k] = v end
  end
  return out
end

--- Updates the row `pk` of `name` with `patch` (Kong's PATCH; a partial config merges with the one
--- there, its shorthand fields moved first, as Kong translates a patch before merging it): the row, or
--- nil and an error table. options: Kong's `{ ttl = s }`, the row's ttl counted again from now.
function M.update(name, pk, patch, options)
  local r = find(name, pk)
  if not r then return nil, errors.not_found({ id = id_of(pk) }) end
  -- Kong's postgres strategy keeps a ttl as the moment the row goes: an update without one leaves that moment
  -- where it was, whatever created_at becomes (rows here keep it as seconds after created_at)
  local expires = type(r.ttl) == "number" and (tonumber(r.created_at) or 0) + r.ttl or nil
  local ttl = type(options) == "table" and tonumber(options.ttl) or nil
  if ttl then expires = ttl > 0 and ngx.now() + ttl or nil end
  local row = copy(r)
  for k, v in pairs(patch) do
    if k == "config" and type(v) == "table" and type(row.config) == "table" then
      if name == "plugins" then
        local ok, schema = pcall(require, "kong.plugins." .. tostring(row.name) .. ".schema")
        if ok and type(schema) == "table" then
          local moved, errs = require("broker.schema").shorthands(schema, v)
          if not moved then return nil, errors.schema_violation(errors.tree(errs, "config")) end
          v = moved
        end
      end
      row.config = merge(row.config, v)
    else
      row[k] = v
    end
  end
  row.id = r.id
  row.ttl = expires and expires - (tonumber(row.created_at) or 0) or nil
  return replace(name, r, row, patch, copy(r))
end

--- Replaces the row `pk` of `name` with `given` (Kong's PUT), or inserts it with that id.
function M.upsert(name, pk, given)
  local r = find(name, pk)
  if not r then
    local row = copy(given)
    row.id = id_of(pk)
    return M.try_insert(name, row)
  end
  local row = copy(given)
  row.id, row.created_at = r.id, r.created_at
  return replace(name, r, row, given)
end

-- the rows of other tables that point at `name`'s row `id`, with what Kong does on delete
local function referencing(name, id)
  local out = {}
  for table_name, list in pairs(store.given) do
    local info = entities.info(table_name)
    for field, parent in pairs(info.foreign or {}) do
      if parent == name then
        for _, r in ipairs(list) do
          if id_of(r[field]) == id then out[#out + 1] = { table = table_name, row = r } end
        end
      end
    end
  end
  return out
end

--- Deletes the row `pk` of `name`; plugins and credentials on it go with it, routes on a service refuse.
function M.delete(name, pk)
  local r = find(name, pk)
  if not r then return true end
  local refs = referencing(name, r.id)
  for _, ref in ipairs(refs) do
    if ref.table == "routes" then return nil, errors.referenced_by(name, "routes") end
  end
  for _, ref in ipairs(refs) do M.delete(ref.table, ref.row.id) end
  local _, i = find(name, r.id)
  table.remove(rows(name), i)
  changed(name, r)
  return true
end

-- options: Kong's `{ ttl = s }` keeps the ttl on the row; kong.db stops finding it once the spec's clock passes it
local function with_options(row, options)
  if type(options) ~= "table" or options.ttl == nil then return row end
  local c = copy(row)
  c.ttl = options.ttl
  return c
end
M.with_options = with_options

-- Kong's test blueprints fill some fields in when the spec leaves them out: a numbered sequence per
-- get_db_utils, or a fixed value
local sequences = {}
local function seq(format)
  return function()
    sequences[format] = (sequences[format] or 0) + 1
    return format:format(sequences[format])
  end
end
local fixed = function(v) return function() return v end end
local BLUEPRINT_DEFAULTS = {
  consumers = { custom_id = seq("consumer-id-%d"), username = seq("consumer-username-%d") },
  acls = { group = seq("acl-group-%d") },
  jwt_secrets = { key = seq("jwt-key-%d"), secret = fixed("secret") },
  keyauth_credentials = { key = seq("keyauth-key-%d") },
  hmacauth_credentials = { username = seq("hmac-username-%d"), secret = fixed("secret") },
  oauth2_credentials = { name = fixed("oauth2 credential"), client_secret = fixed("secret") },
  oauth2_authorization_codes = { code = seq("oauth-code-%d"), scope = fixed("default") },
  oauth2_tokens = { token_type = fixed("bearer"), expires_in = fixed(1000000000), scope = fixed("default") },
  named_services = { name = seq("service-name-%d"), host = seq("service-host-%d.test") },
  named_routes = { name = seq("route-name-%d"), hosts = function() return { (seq("route-host-%d.test"))() } end },
}
-- blueprints under another name: the table they insert into
local BLUEPRINT_TABLES = { named_services = "services", named_routes = "routes" }

--- A new get_db_utils starts the blueprints' sequences again.
function M.reset_sequences() sequences = {} end

-- bp.<name>: insert, insert_n, remove; bp.<plugin>_plugins (key_auth_plugins …) insert that plugin
local Blueprint = {}
Blueprint.__index = Blueprint
function Blueprint:insert(row, options)
  row = copy(row)
  for field, make in pairs(BLUEPRINT_DEFAULTS[self.name] or {}) do
    if row[field] == nil then row[field] = make() end
  end
  if self.plugin and row.name == nil then row.name = self.plugin end
  -- the row as Kong stores it (a hashed password), as Kong's blueprints return it
  return entities.present(self.table, M.insert(self.table, with_options(row, options)))
end
function Blueprint:insert_n(n, row, options)
  local out = {}
  for i = 1, n do out[i] = self:insert(row, options) end
  return out
end
function Blueprint:remove(pk) M.delete(self.table, pk) end

M.bp = setmetatable({}, { __index = function(t, name)
  if type(name) ~= "string" then return nil end
  local plugin = name:match("^(.+)_plugins$")
  local b = setmetatable({ name = name, table = plugin and "plugins" or BLUEPRINT_TABLES[name] or name,
    plugin = plugin and (plugin:gsub("_", "-")) or nil }, Blueprint)
  rawset(t, name, b)
  return b
end })

-- a database holds its default workspace from the start, as Kong's migrations bootstrap it
if not store.given.workspaces then
  store.given.workspaces = fresh("workspaces")
  changed()
end

return M
