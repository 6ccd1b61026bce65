-- A plugin's config as Kong's schema reads a stored row (its `select` context), written for broker: a
-- field stored as null reads as nil, and a `{vault://…}` reference in a referenceable string field, or in a
-- referenceable string element of an array, set or map, reaches the plugin resolved through kong.vault.get;
-- each record keeps the references it held in its `$refs` (kong.vault.update resolves them again).
local null = ngx.null
local M = {}

--- Whether v looks like a reference: `{vault://` … `}` (kong.pdk.vault's is_reference).
function M.is_reference(v)
  return type(v) == "string" and v:sub(1, 9) == "{vault://" and v:sub(-1) == "}"
end

-- as Kong: a reference that does not resolve is warned of and becomes an empty string
local function resolve(reference)
  local value, err = kong.vault.get(reference)
  if not value then
    if err then
      kong.log.warn("unable to resolve reference ", reference, " (", err, ")")
    else
      kong.log.notice("unable to resolve reference ", reference)
    end
  end
  return value or ""
end

local resolve_record

-- the references among a table's elements (an array's, a set's or a map's), resolved in place
local function elements(def, t)
  local found
  if def.type == "string" and def.referenceable then
    for k, x in pairs(t) do
      if M.is_reference(x) then
        found = found or {}
        found[k] = x
        t[k] = resolve(x)
      end
    end
  elseif def.type == "record" then
    for _, x in pairs(t) do
      if type(x) == "table" then resolve_record(def, x) end
    end
  end
  return found
end

resolve_record = function(def, conf)
  local refs
  for _, f in ipairs(def.fields or {}) do
    local name, field = next(f)
    local v = conf[name]
    if v == null then
      conf[name] = nil
    elseif field.type == "string" and field.referenceable and M.is_reference(v) then
      refs = refs or {}
      refs[name] = v
      conf[name] = resolve(v)
    elseif type(v) == "table" then
      if field.type == "record" then
        resolve_record(field, v)
      else
        local inner = (field.type == "array" or field.type == "set") and field.elements
          or field.type == "map" and field.values
        local found = inner and elements(inner, v)
        if found then
          refs = refs or {}
          refs[name] = found
        end
      end
    end
  end
  conf["$refs"] = refs
  return conf
end

--- A plugin's config as Kong reads it (in place), by its schema.lua's config record.
function M.config(schema, conf)
  if type(schema) ~= "table" or type(conf) ~= "table" then return conf end
  for _, f in ipairs(schema.fields or {}) do
    local name, def = next(f)
    if name == "config" and type(def) == "table" then return resolve_record(def, conf) end
  end
  return conf
end

return M
