-- kong.db.declarative's import (broker's own, as Kong splits its module): entities of `{ <entity> = { [id] = row } }`
-- upserted into spec.helpers' in-memory database as Kong's DAO would, referenced entities first; replace() is a
-- whole config in place of every row, the rows as they were when one is refused.
local db = require "broker.spec.db"
local entities = require "broker.spec.entities"
local store = require "broker.db"
local null = ngx.null
local M = {}

-- the core entities in the order their references need; plugin DAOs after them, plugins last
local FIRST = { "services", "routes", "consumers" }

--- Whether `kind` is an entity a config may hold: a core one or a loaded plugin's DAO.
function M.known(kind)
  return kind == "services" or kind == "routes" or kind == "consumers" or kind == "plugins" or entities.daos()[kind] ~= nil
end

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

-- each entity upserted as Kong's DAO would; `refused(name, row, err_t)` says whether to stop; the rows as
-- Kong answers them, by entity and id
local function upsert_all(given, meta, refused)
  local transform = not (type(meta) == "table" and meta._transform == false)
  local loaded = {}
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
      if not stored then
        if refused(name, entity, err_t) then return nil end
      else
        if not transform then store.as_stored[stored] = true end
        loaded[name] = loaded[name] or {}
        loaded[name][stored.id] = entities.present(name, stored)
      end
    end
  end
  return loaded
end

--- Upserts every entity given into the database: true, or nil, the DAO's message and its error table.
function M.load_into_db(given, meta)
  assert(type(given) == "table", "entities must be a table")
  for name in pairs(given) do
    if not M.known(name) then return nil, "unknown entity: " .. tostring(name) end
  end
  local first_err
  upsert_all(given, meta, function(_, _, err_t) first_err = err_t return true end)
  if first_err then return nil, "[postgres] " .. first_err.message, first_err end
  return true
end


--- Every row replaced by `ents` (parsed, `where` each row was in the config): the rows by entity and id, or nil
--- and the errors by where.
function M.replace(ents, meta, where)
  local saved = {}
  for name, list in pairs(store.given) do saved[name] = list end
  db.truncate()
  local errs = {}
  local loaded = upsert_all(ents, meta, function(_, entity, err_t)
    local at, t = where[entity], errs
    for i = 1, #at do
      t[at[i]] = type(t[at[i]]) == "table" and t[at[i]] or {}
      t = t[at[i]]
    end
    for k, v in pairs(err_t.fields or { ["@entity"] = { err_t.message } }) do t[k] = v end
  end)
  if next(errs) then
    for k in pairs(store.given) do store.given[k] = nil end
    for name, list in pairs(saved) do store.given[name] = list end
    store.reset()
    return nil, errs
  end
  return loaded
end

return M
