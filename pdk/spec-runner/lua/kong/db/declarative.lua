-- kong.db.declarative, broker's own (written from Kong's documented declarative config): what a spec does
-- with it on spec.helpers' in-memory database. load_into_db(entities, meta) upserts each entity of
-- `{ <entity> = { [key] = row } }` as Kong's DAO would, the entities a row references first;
-- `meta._transform = false` keeps rows as Kong stored them (a password hashed already). new_config(conf)
-- parses a declarative file (YAML, JSON or a Lua table of Kong's format: entities nested in the ones they
-- reference, references by name or id) into those entities; load_config replaces the database with one
-- (start_kong's declarative_config). The rest of Kong's module (exporting, loading into the cache) raises
-- naming itself.
local db = require "broker.spec.db"
local entities = require "broker.spec.entities"
local store = require "broker.db"
local null = ngx.null
local M = {}

-- the core entities in the order their references need; plugin DAOs after them, plugins last
local FIRST = { "services", "routes", "consumers" }

local function order(given)
  local out, seen = {}, {}
  for _, name in ipairs(FIRST) do
    if given[name] then out[#out + 1] = name seen[name] = true end
  end
  local rest = {}
  for name in pairs(given) do
    if not seen[name] and name ~= "plugins" then rest[#rest + 1] = name end
  end
  table.sort(rest)
  for _, name in ipairs(rest) do out[#out + 1] = name end
  if given.plugins then out[#out + 1] = "plugins" end
  return out
end

local KNOWN = { services = true, routes = true, consumers = true, plugins = true }

--- Upserts every entity given into the database: true, or nil, the DAO's message and its error table.
function M.load_into_db(given, meta)
  assert(type(given) == "table", "entities must be a table")
  local transform = not (type(meta) == "table" and meta._transform == false)
  local daos = entities.daos()
  for name in pairs(given) do
    if not KNOWN[name] and not daos[name] then return nil, "unknown entity: " .. tostring(name) end
  end
  for _, name in ipairs(order(given)) do
    for _, entity in pairs(given[name]) do
      -- Kong drops the legacy _tags and the workspace; a null field is one not set
      local row = {}
      for k, v in pairs(entity) do
        if v ~= null and k ~= "_tags" and k ~= "ws_id" then row[k] = v end
      end
      local stored, err_t
      if row.id and db.find(name, row.id) then stored, err_t = db.upsert(name, row.id, row)
      else stored, err_t = db.try_insert(name, row) end
      if not stored then return nil, "[postgres] " .. err_t.message, err_t end
      if not transform then store.as_stored[stored] = true end
    end
  end
  return true
end

-- the entities a declarative file may name: the core ones and every known DAO, with their foreign keys
local function kinds()
  local out = {
    services = { foreign = {}, key = "name" },
    routes = { foreign = { service = "services" }, key = "name" },
    consumers = { foreign = {}, key = "username" },
    plugins = { foreign = { service = "services", route = "routes", consumer = "consumers" } },
  }
  for name, info in pairs(entities.daos()) do out[name] = { foreign = info.foreign, key = info.endpoint_key } end
  return out
end

local uuid = require("kong.tools.uuid")

-- Kong's declarative format as `{ <entity> = { [id] = row } }`: a nested entity gets its parent's id, a
-- reference by name (or username, a credential's key …) becomes the id of the row that has it
local function flatten(doc)
  if type(doc) ~= "table" then return nil, "expected an object at the top of the declarative config" end
  local known = kinds()
  local out, added = {}, {}
  -- an array under an entity's name: entities nested in the row (a service's routes, a consumer's acls)
  local function nested(k, v) return known[k] ~= nil and type(v) == "table" and (v[1] ~= nil or next(v) == nil) end
  local function add(kind, row, parent_field, parent_id)
    if type(row) ~= "table" then return "expected an object in '" .. kind .. "'" end
    local flat = {}
    for k, v in pairs(row) do
      if not nested(k, v) then flat[k] = v end
    end
    flat.id = flat.id or uuid.uuid()
    if parent_field then flat[parent_field] = { id = parent_id } end
    out[kind] = out[kind] or {}
    out[kind][flat.id] = flat
    added[#added + 1] = { kind = kind, row = flat }
    for k, v in pairs(row) do
      if nested(k, v) then
        local field
        for f, parent in pairs(known[k].foreign or {}) do if parent == kind then field = f end end
        if not field then return "'" .. k .. "' cannot be nested in '" .. kind .. "'" end
        for _, r in ipairs(v) do
          local err = add(k, r, field, flat.id)
          if err then return err end
        end
      end
    end
  end
  for kind, list in pairs(doc) do
    if kind:sub(1, 1) ~= "_" then
      if not known[kind] then return nil, "unknown entity: " .. tostring(kind) end
      if type(list) ~= "table" then return nil, "expected an array in '" .. kind .. "'" end
      for _, row in ipairs(list) do
        local err = add(kind, row)
        if err then return nil, err end
      end
    end
  end
  -- references by name: the id of the row of that entity whose id or endpoint key it is
  for _, item in ipairs(added) do
    for field, parent in pairs(known[item.kind].foreign or {}) do
      local v = item.row[field]
      if type(v) == "string" then
        local found
        for id, r in pairs(out[parent] or {}) do
          if id == v or (known[parent].key and r[known[parent].key] == v) then found = id end
        end
        if not found and db.find(parent, v) then found = v end
        if not found then
          return nil, item.kind .. "." .. field .. ": no " .. parent .. " named '" .. v .. "' in the declarative config"
        end
        item.row[field] = { id = found }
      end
    end
  end
  return out
end

local function decode(text, filename)
  if type(text) ~= "string" then return nil, "expected a string of the declarative config" end
  local name = tostring(filename or "")
  if name:match("%.json$") or (not name:match("%.ya?ml$") and text:match("^%s*{")) then
    local t, err = require("cjson.safe").decode(text)
    if t == nil then return nil, "failed parsing declarative configuration: " .. tostring(err) end
    return t
  end
  local t, err = require("broker.spec.yaml").decode(text)
  if t == nil then return nil, "failed parsing declarative configuration: " .. tostring(err) end
  return t
end

--- Kong's declarative config parser: parse_string(text, filename), parse_file(path), parse_table(t), each
--- answering the entities (load_into_db's shape), or nil and the error, then nil, the meta and a hash.
function M.new_config()
  local dc = {}
  function dc:parse_table(t)
    local ents, err = flatten(t)
    if not ents then return nil, err end
    local meta = { _format_version = t._format_version, _transform = t._transform ~= false }
    return ents, nil, nil, meta, ngx.md5(require("cjson").encode(t))
  end
  function dc:parse_string(text, filename)
    local t, err = decode(text, filename)
    if t == nil then return nil, err end
    return self:parse_table(t)
  end
  function dc:parse_file(path)
    local f, err = io.open(path, "r")
    if not f then return nil, "failed reading declarative configuration file " .. tostring(path) .. ": " .. tostring(err) end
    local text = f:read("*a")
    f:close()
    return self:parse_string(text, path)
  end
  return dc
end

--- The database replaced by a declarative config (its text, or a table), as Kong started with it: true, or nil
--- and why.
function M.load_config(config, filename)
  local dc = M.new_config()
  local ents, err, _, meta
  if type(config) == "table" then ents, err, _, meta = dc:parse_table(config)
  else ents, err, _, meta = dc:parse_string(config, filename) end
  if not ents then return nil, err end
  db.truncate()
  return M.load_into_db(ents, meta)
end

return setmetatable(M, { __index = function(_, name)
  error("kong.db.declarative." .. tostring(name) .. " is not emulated by broker (load_into_db is)", 2)
end })
