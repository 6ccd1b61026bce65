-- kong.db.<dao> and kong.cache on the fixture's `db` section (written for broker). Rows are as the
-- Admin API takes them; a plugin's daos.lua says which fields are unique and which are foreign
-- keys, and its transformations run on load, as Kong's DAO runs them on insert.
-- dropped: tables a spec's connector:query("DROP TABLE …") removed; reads of them fail as Postgres's do
local M = { worker_events = {}, cluster_events = {}, dropped = {} }
local rows_by_dao = {}

-- what broker knows without a daos.lua: the core entities
local CORE = {
  consumers = { unique = { "username", "custom_id" }, foreign = {} },
  routes = { unique = { "name" }, foreign = { "service" } },
  services = { unique = { "name" }, foreign = {} },
  consumer_groups = { unique = { "name" }, foreign = {} },
}

-- a plugin's DAO definitions (its daos.lua, as a list); a plugin without one is searched for once, not on every
-- read of a schema (a missing module is a search of every root)
local no_daos = {}
local function daos_of(p)
  if no_daos[p] then return {} end
  local ok, daos = pcall(require, "kong.plugins." .. p .. ".daos")
  if not (ok and type(daos) == "table") then
    no_daos[p] = true
    return {}
  end
  return daos[1] and daos or { daos }
end

-- the plugins whose handlers are loaded, each with its DAO definitions
local function each_plugin_dao(visit)
  for mod in pairs(package.loaded) do
    local p = type(mod) == "string" and mod:match("^kong%.plugins%.([^.]+)%.handler$")
    if p then
      for _, d in ipairs(daos_of(p)) do
        if visit(p, d) then return end
      end
    end
  end
end

local function schema_of(name)
  if CORE[name] then return CORE[name] end
  local unique, foreign, transformations, cache_key, fields = {}, {}, nil, nil, {}
  each_plugin_dao(function(_, d)
    if d.name == name then
      for _, f in ipairs(d.fields or {}) do
        local fname, def = next(f)
        if def.unique then unique[#unique + 1] = fname end
        if def.type == "foreign" then foreign[#foreign + 1] = fname end
        fields[#fields + 1] = { name = fname, def = def }
      end
      transformations, cache_key = d.transformations, d.cache_key
    end
  end)
  return { unique = unique, foreign = foreign, transformations = transformations, cache_key = cache_key, fields = fields }
end

local function apply_transformations(s, row)
  for _, t in ipairs(s.transformations or {}) do
    local args, ready = {}, true
    for i, path in ipairs(t.input or {}) do args[i] = row[path] if args[i] == nil then ready = false end end
    for _, path in ipairs(t.needs or {}) do
      local a, b = path:match("^([^.]+)%.(.+)$")
      local v = a and type(row[a]) == "table" and row[a][b] or row[path]
      args[#args + 1] = v
    end
    local fn = t.on_write or t.on_read
    if ready and fn then
      local out = fn(table.unpack(args))
      for k, v in pairs(out or {}) do row[k] = v end
    end
  end
end

-- spec.helpers' database shows its rows as Kong stores them with the same transformations
M.apply_transformations = apply_transformations
-- given rows stored as Kong stored them already (kong.db.declarative's `_transform = false`): not transformed again
M.as_stored = setmetatable({}, { __mode = "k" })

-- a row inserted with a ttl (Kong's `{ ttl = s }`) is gone once its seconds have passed on ngx.now's clock;
-- until then its ttl reads as the seconds left, as Kong's DAO gives it (key-auth caches the row that long)
local expires_at = setmetatable({}, { __mode = "k" })
local function expire(list)
  local now
  for i = #list, 1, -1 do
    local r = list[i]
    local at = expires_at[r]
    if at then
      now = now or ngx.now()
      if at <= now then table.remove(list, i) else r.ttl = math.floor(at - now) end
    end
  end
  return list
end

local function rows(name)
  local list = rows_by_dao[name]
  if list then return expire(list) end
  list = {}
  local s = schema_of(name)
  for i, r in ipairs(M.given[name] or {}) do
    local row = {}
    for k, v in pairs(r) do row[k] = v end
    row.id = row.id or string.format("00000000-0000-4000-8000-%012d", i)
    row.created_at = row.created_at or 1700000000
    if type(row.ttl) == "number" then expires_at[row] = (tonumber(row.created_at) or 0) + row.ttl end
    if not M.as_stored[r] then apply_transformations(s, row) end
    list[#list + 1] = row
  end
  rows_by_dao[name] = list
  return expire(list)
end

-- a plugin DAO's own methods (its definition's `dao` module, mixed in as Kong's DAO does, before the finders
-- below) and its strategy's (kong.plugins.<plugin>.strategies.<strategy>.<dao>, Kong's `dao.strategy`)
local custom = {}
local function custom_of(name)
  if custom[name] then return custom[name] end
  each_plugin_dao(function(p, d)
    if d.name == name and type(d.dao) == "string" then
      local found, strat = pcall(require,
        "kong.plugins." .. p .. ".strategies." .. tostring(M.db.strategy) .. "." .. name)
      custom[name] = { methods = require(d.dao), strategy = setmetatable({}, { __index = found and strat or nil }) }
      return true
    end
  end)
  return custom[name]
end

local Dao = {}
Dao.__index = function(self, key)
  local v = Dao[key]
  if v then return v end
  local own = type(key) == "string" and custom_of(self.name)
  if own and key == "strategy" then return own.strategy end
  if own and own.methods[key] then return own.methods[key] end
  local field = type(key) == "string" and key:match("^select_by_(.+)$")
  if field then
    return function(dao, value)
      for _, r in ipairs(rows(dao.name)) do if r[field] == value then return r end end
      return nil
    end
  end
  local fk = type(key) == "string" and key:match("^each_for_(.+)$")
  if fk then
    return function(dao, foreign)
      local id = type(foreign) == "table" and foreign.id or foreign
      local list, i = rows(dao.name), 0
      return function()
        while true do
          i = i + 1
          local r = list[i]
          if not r then return nil end
          local v = r[fk]
          if (type(v) == "table" and v.id or v) == id then return r end
        end
      end
    end
  end
  local op, by = nil, nil
  if type(key) == "string" then op, by = key:match("^(update)_by_(.+)$") end
  if not op and type(key) == "string" then op, by = key:match("^(upsert)_by_(.+)$") end
  if not op and type(key) == "string" then op, by = key:match("^(delete)_by_(.+)$") end
  if op then
    return function(dao, value, entity)
      local row = dao["select_by_" .. by](dao, value)
      if op == "delete" then
        if row then return dao:delete(row) end
        return true
      end
      if row then return dao:update(row, entity) end
      if op == "upsert" then
        local new = {}
        for k, v in pairs(entity or {}) do new[k] = v end
        new[by] = value
        return dao:insert(new)
      end
      local msg = "could not find the entity with '{" .. by .. "=\"" .. tostring(value) .. "\"}'"
      return nil, msg, { code = 6, name = "not found", message = msg }
    end
  end
  fk = type(key) == "string" and key:match("^page_for_(.+)$")
  if fk then
    return function(dao, foreign)
      local out = {}
      for r in self["each_for_" .. fk](dao, foreign) do out[#out + 1] = r end
      return out, nil, nil
    end
  end
end

function Dao:select(pk)
  if M.dropped[self.name] then
    local msg = '[postgres] ERROR: relation "' .. self.name .. '" does not exist'
    return nil, msg, { code = 13, name = "database error", message = msg }
  end
  -- a primary key of several fields (rate-limiting's counters): the row that has them all
  if type(pk) == "table" and pk.id == nil then
    for _, r in ipairs(rows(self.name)) do
      local all = true
      for k, v in pairs(pk) do if r[k] ~= v then all = false break end end
      if all then return r end
    end
    return nil
  end
  local id = type(pk) == "table" and pk.id or pk
  for _, r in ipairs(rows(self.name)) do if r.id == id then return r end end
  return nil
end
function Dao:each()
  local list, i = rows(self.name), 0
  return function() i = i + 1 return list[i] end
end
function Dao:page()
  local out = {}
  for i, r in ipairs(rows(self.name)) do out[i] = r end
  return out, nil, nil
end
function Dao:cache_key(a, b, c, d, e)
  if type(a) == "table" then
    local s = schema_of(self.name)
    local parts = {}
    for i, f in ipairs(s.cache_key or { "id" }) do
      local v = a[f]
      parts[i] = type(v) == "table" and v.id or tostring(v or "")
    end
    a, b, c, d, e = parts[1], parts[2], parts[3], parts[4], parts[5]
  end
  return string.format("%s:%s:%s:%s:%s:%s:", self.name, a or "", b or "", c or "", d or "", e or "")
end
-- Writes land in the replay's rows (the next replay starts from the fixture's again), are seen by later
-- reads, and show in the trace as kong.db.<dao>:<method>(...).
local function traced(dao, method, ...) __host("trace", "kong.db." .. dao.name .. ":" .. method, ...) end

local function pk_text(pk)
  local id = type(pk) == "table" and pk.id or pk
  return "{id=\"" .. tostring(id) .. "\"}"
end

local function conflict(dao, row)
  for _, f in ipairs(schema_of(dao.name).unique) do
    local v = row[f]
    if v ~= nil and v ~= ngx.null then
      for _, r in ipairs(rows(dao.name)) do
        if r ~= row and r.id ~= row.id and r[f] == v then
          local msg = "UNIQUE violation detected on '{" .. f .. "=\"" .. tostring(v) .. "\"}'"
          return msg, { code = 5, name = "unique constraint violation", message = msg, fields = { [f] = v } }
        end
      end
    end
  end
end

function Dao:insert(entity)
  if type(entity) ~= "table" then error("entity must be a table", 2) end
  local row = {}
  for k, v in pairs(entity) do row[k] = v end
  row.id = row.id or require("kong.tools.uuid").uuid()
  row.created_at = row.created_at or ngx.time()
  -- what Kong's DAO fills on insert: `auto` fields (a random string, a uuid, the time) and defaults
  for _, f in ipairs(schema_of(self.name).fields or {}) do
    local def = f.def
    if row[f.name] == nil then
      if def.auto then
        if def.type == "string" then row[f.name] = require("kong.tools.rand").random_string()
        elseif def.type == "uuid" then row[f.name] = require("kong.tools.uuid").uuid()
        elseif def.type == "integer" or def.type == "number" then row[f.name] = ngx.time() end
      elseif def.default ~= nil and def.default ~= ngx.null then
        row[f.name] = type(def.default) == "table" and require("kong.tools.table").deep_copy(def.default) or def.default
      end
    end
  end
  apply_transformations(schema_of(self.name), row)
  local err, err_t = conflict(self, row)
  if not err and self:select(row.id) then
    err = "primary key violation on key '" .. pk_text(row.id) .. "'"
    err_t = { code = 4, name = "primary key violation", message = err }
  end
  traced(self, "insert", entity)
  if err then return nil, err, err_t end
  local list = rows(self.name)
  list[#list + 1] = row
  return row
end

function Dao:update(pk, entity)
  if type(entity) ~= "table" then error("entity must be a table", 2) end
  local row = self:select(pk)
  traced(self, "update", pk, entity)
  if not row then
    local msg = "could not find the entity with primary key '" .. pk_text(pk) .. "'"
    return nil, msg, { code = 6, name = "not found", message = msg }
  end
  local updated = {}
  for k, v in pairs(row) do updated[k] = v end
  for k, v in pairs(entity) do if v == ngx.null then updated[k] = nil else updated[k] = v end end
  updated.updated_at = ngx.time()
  apply_transformations(schema_of(self.name), updated)
  local err, err_t = conflict(self, updated)
  if err then return nil, err, err_t end
  for k in pairs(row) do row[k] = nil end
  for k, v in pairs(updated) do row[k] = v end
  return row
end

function Dao:upsert(pk, entity)
  if self:select(pk) then return self:update(pk, entity) end
  local row = {}
  for k, v in pairs(entity or {}) do row[k] = v end
  row.id = type(pk) == "table" and pk.id or pk
  return self:insert(row)
end

function Dao:delete(pk)
  local id = type(pk) == "table" and pk.id or pk
  local list = rows(self.name)
  traced(self, "delete", pk)
  for i, r in ipairs(list) do
    if r.id == id then table.remove(list, i) break end
  end
  return true
end

function Dao:truncate() rows_by_dao[self.name] = {} return true end

-- a host that keeps rows of its own (spec.helpers' database) takes the writes: M.writer
for _, op in ipairs({ "insert", "update", "upsert", "delete" }) do
  local own = Dao[op]
  Dao[op] = function(self, ...)
    if M.writer then return M.writer(self.name, op, ...) end
    return own(self, ...)
  end
end

M.db = setmetatable({}, {
  __index = function(t, name)
    local dao = setmetatable({ name = name, schema = { name = name } }, Dao)
    rawset(t, name, dao)
    return dao
  end,
})

-- A replay is DB-less Kong: its connector is Kong's "off" one, which connects (prometheus's db_reachable is 1)
-- and runs no query
local function ignore() return true end
M.db.strategy = "off"
M.db.connector = {
  database = "off", timeout = 1, connect = ignore, close = ignore, setkeepalive = ignore,
  infos = function() return { strategy = "off", db_name = "off", db_desc = "cache", db_ver = "n/a" } end,
  query = function() return nil, "cannot perform queries without a database" end,
}

-- kong.cache: values the callback loads, kept for the VM's life (as Kong's node cache is) or until the
-- ttl the callback (else opts.ttl, opts.neg_ttl for a miss) gave them passes on ngx.now's clock
local store = {}
M.cache = {}
local function cached(key)
  local hit = store[key]
  if hit and hit.expires and hit.expires <= ngx.now() then
    store[key] = nil
    return nil
  end
  return hit
end
function M.cache:get(key, opts, cb, ...)
  local hit = cached(key)
  if hit then return hit.value, nil, 1 end
  if not cb then return nil end
  local value, err, ttl = cb(...)
  if err then return nil, err end
  if type(ttl) ~= "number" and type(opts) == "table" then
    if value == nil then ttl = opts.neg_ttl or opts.ttl else ttl = opts.ttl end
  end
  store[key] = { value = value, expires = type(ttl) == "number" and ttl > 0 and ngx.now() + ttl or nil }
  return value, nil, 3
end
function M.cache:get_bulk() return nil, "broker: kong.cache:get_bulk is not emulated" end
function M.cache:probe(key)
  local hit = cached(key)
  if hit then return hit.expires and hit.expires - ngx.now() or 0, nil, hit.value end
  return nil
end
--- Kong's cache:safe_set (its cache warmup): the value kept under `key`.
function M.cache:safe_set(key, value) store[key] = { value = value } return true end
function M.cache:invalidate(key) store[key] = nil return true end
M.cache.invalidate_local = M.cache.invalidate
function M.cache:purge() store = {} return true end
function M.cache:renew(key, opts, cb, ...) store[key] = nil return self:get(key, opts, cb, ...) end
function M.worker_events.register() end
function M.worker_events.post() return true end
function M.cluster_events.subscribe() return true end
function M.cluster_events.broadcast() return true end

function M.init(given) M.given = given or {} end
--- The rows as given again, and an empty cache (the given rows changed).
function M.reset() rows_by_dao, store = {}, {} end
--- The rows as given again, the cache kept (the writer invalidates the keys a change touches).
function M.reset_rows() rows_by_dao = {} end
--- A new request: a replay sees rows as given and an empty cache; a started Kong (spec.helpers' in
--- process, `lasting_cache`) keeps its node cache across requests until its database changes.
function M.begin_request()
  rows_by_dao = {}
  if not M.lasting_cache then store = {} end
end

return M
