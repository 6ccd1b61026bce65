-- Kong's cache warmup as a started Kong runs it (written for broker from Kong's documented
-- db_cache_warmup_entities): every row of the entities named goes into the node cache under its DAO's
-- cache key, as kong.db shows the row; acl's groups of each consumer with an acl row too. Routes and
-- plugins are not cached this way (Kong keeps them apart); a name with no DAO is an error naming it.
local store = require "broker.db"
local entities = require "broker.spec.entities"
local M = {}

local function cache_key(name, row)
  local fields = entities.info(name).def and entities.info(name).def.cache_key
  local parts = { name }
  for i, f in ipairs(type(fields) == "table" and fields or { "id" }) do
    local v = row[f]
    parts[i + 1] = type(v) == "table" and tostring(v.id) or tostring(v == nil and "" or v)
  end
  for i = #parts + 1, 6 do parts[i] = "" end
  return table.concat(parts, ":") .. ":"
end

--- Fills the node cache from `list` (start_kong's db_cache_warmup_entities: a string or an array).
function M.run(list)
  local names = {}
  if type(list) == "table" then for _, n in ipairs(list) do names[#names + 1] = n end
  else for n in tostring(list or ""):gmatch("[^,%s]+") do names[#names + 1] = n end end
  for _, name in ipairs(names) do
    if name ~= "routes" and name ~= "plugins" then
      local info = entities.info(name)
      if not info.def and not ({ services = true, consumers = true })[name] then
        return nil, "spec.helpers.start_kong: db_cache_warmup_entities names '" .. name .. "', which has no DAO"
      end
      for row in store.db[name]:each() do
        store.cache:safe_set(cache_key(name, row), row)
        if name == "acls" and type(row.consumer) == "table" then
          local ok, groups = pcall(require, "kong.plugins.acl.groups")
          if ok then groups.warmup_groups_cache(row.consumer.id) end
        end
      end
    end
  end
  return true
end

return M
