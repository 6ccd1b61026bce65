-- kong.db.declarative, broker's own (written from Kong's documented declarative config): what a spec does
-- with it on spec.helpers' in-memory database. load_into_db(entities, meta) upserts each entity of
-- `{ <entity> = { [key] = row } }` as Kong's DAO would, the entities a row references first;
-- `meta._transform = false` keeps rows as Kong stored them (a password hashed already). The rest of
-- Kong's module (parsing and exporting declarative files, loading them into the cache) raises naming itself.
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

return setmetatable(M, { __index = function(_, name)
  error("kong.db.declarative." .. tostring(name) .. " is not emulated by broker (load_into_db is)", 2)
end })
