-- The error tables of Kong's DAO as spec.helpers' database and Admin API answer them (written for
-- broker from Kong's Admin API documentation): a code, the error's name, a message and the fields,
-- and the HTTP status the Admin API gives each code.
local M = {}

M.CODES = {
  schema_violation = { 2, "schema violation", 400 },
  primary_key_violation = { 3, "primary key violation", 400 },
  foreign_key_violation = { 4, "foreign key violation", 400 },
  unique_violation = { 5, "unique constraint violation", 409 },
  not_found = { 6, "not found", 404 },
}

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  return keys
end

-- `{key="v"}`, as Kong prints a key in its messages
local function pretty(t)
  if type(t) ~= "table" then return tostring(t) end
  local parts = {}
  for _, k in ipairs(sorted_keys(t)) do
    local v = t[k]
    parts[#parts + 1] = tostring(k) .. "=" .. (type(v) == "string" and ("\"" .. v .. "\"") or pretty(v))
  end
  return "{" .. table.concat(parts, ",") .. "}"
end
M.pretty = pretty

local function new(kind, message, fields)
  local c = M.CODES[kind]
  return setmetatable({ code = c[1], name = c[2], message = message, fields = fields, status = c[3] },
    { __tostring = function(e) return e.message end })
end

--- A schema violation from a tree of field errors (`{ config = { second = "…" }, ["@entity"] = { "…" } }`).
function M.schema_violation(fields)
  local buf = {}
  for _, m in ipairs(type(fields["@entity"]) == "table" and fields["@entity"] or {}) do buf[#buf + 1] = m end
  for _, name in ipairs(sorted_keys(fields)) do
    local v = fields[name]
    if name ~= "@entity" then
      if type(v) == "table" then
        for _, sub in ipairs(sorted_keys(v)) do
          local m = v[sub]
          buf[#buf + 1] = name .. "." .. tostring(sub) .. ": " .. (type(m) == "table" and pretty(m) or tostring(m))
        end
      else
        buf[#buf + 1] = name .. ": " .. tostring(v)
      end
    end
  end
  local message = #buf == 1 and ("schema violation (" .. buf[1] .. ")")
    or ("" .. #buf .. " schema violations (" .. table.concat(buf, "; ") .. ")")
  return new("schema_violation", message, fields)
end

function M.unique_violation(key)
  return new("unique_violation", "UNIQUE violation detected on '" .. pretty(key) .. "'", key)
end

function M.not_found(pk)
  return new("not_found", "could not find the entity with primary key '" .. pretty(pk) .. "'", pk)
end

function M.foreign_key_violation(field, pk, parent)
  return new("foreign_key_violation", "the foreign key '" .. pretty(pk) .. "' does not reference an existing '"
    .. parent .. "' entity.", { [field] = pk })
end

function M.referenced_by(parent, child)
  return new("foreign_key_violation", "an existing '" .. child .. "' entity references this '" .. parent
    .. "' entity", { ["@referenced_by"] = child })
end

local function split(m)
  local out = {}
  if type(m) == "table" then for _, x in ipairs(m) do out[#out + 1] = x end return out end
  for part in tostring(m):gmatch("[^;]+") do out[#out + 1] = (part:gsub("^%s+", ""):gsub("%s+$", "")) end
  return out
end

--- A plugin's config checked against its schema: the config with its defaults, or nil and Kong's tree of
--- errors, the schema's own entity checks at the top (`["@entity"]`), the config record's under `config`.
-- Kong's process_auto_fields on insert: an `auto` field of the config that is not given gets a value (a uuid,
-- else a random string: oauth2's provision_key), records within it alike
local function with_auto(def, conf)
  if type(def) ~= "table" or type(conf) ~= "table" then return conf end
  local out
  for _, f in ipairs(def.fields or {}) do
    local name, fdef = next(f)
    local v, filled = conf[name], nil
    if v == nil and fdef.auto and fdef.type == "string" then
      filled = fdef.uuid and require("kong.tools.uuid").uuid() or require("kong.tools.rand").random_string()
    elseif fdef.type == "record" and type(v) == "table" then
      local inner = with_auto(fdef, v)
      if inner ~= v then filled = inner end
    end
    if filled ~= nil then
      if not out then
        out = {}
        for k, x in pairs(conf) do out[k] = x end
      end
      out[name] = filled
    end
  end
  return out or conf
end

local function config_def(schema)
  for _, f in ipairs(type(schema) == "table" and schema.fields or {}) do
    if type(f) == "table" and f.config then return f.config end
  end
end

function M.check_plugin(schema, config)
  local process = require("broker.schema").process
  config = with_auto(config_def(schema), config or {})
  local conf, errs = process(schema, config)
  if not errs then return conf end
  local top = {}
  if errs["@entity"] and schema.entity_checks then
    -- broker.schema reports both levels as @entity: what the config alone does not raise is the schema's
    local bare = {}
    for k, v in pairs(schema) do bare[k] = v end
    bare.entity_checks = nil
    local _, own = process(bare, config)
    local inner = {}
    for _, m in ipairs(split(own and own["@entity"] or {})) do inner[m] = true end
    local keep = {}
    for _, m in ipairs(split(errs["@entity"])) do
      if inner[m] then keep[#keep + 1] = m else top[#top + 1] = m end
    end
    errs["@entity"] = #keep > 0 and keep or nil
  end
  local tree = next(errs) and M.tree(errs, "config") or {}
  if #top > 0 then tree["@entity"] = top end
  return nil, tree
end

--- A tree of field errors from broker.schema's flat `{ ["a.b"] = msg, ["@entity"] = msg }`, under `under`.
function M.tree(errs, under)
  local out = {}
  for path, m in pairs(errs) do
    if path == "@config" then
      out = m
      break
    elseif path == "@entity" then
      out["@entity"] = split(m)
    else
      local t, parts = out, {}
      for p in path:gsub("%[(%d+)%]", ".#%1"):gmatch("[^.]+") do
        parts[#parts + 1] = p:sub(1, 1) == "#" and tonumber(p:sub(2)) or p
      end
      for i = 1, #parts - 1 do t[parts[i]] = t[parts[i]] or {} t = t[parts[i]] end
      t[parts[#parts]] = m
    end
  end
  if under then return { [under] = out } end
  return out
end

--- Schema.new(plugin_schema):validate(entity) as Kong's schema specs call it: true, or nil and the tree
--- check_plugin gives (the entity's config checked; its protocols are not). Any other schema raises.
function M.install_schema_validate()
  local Schema = require "kong.db.schema"
  if rawget(Schema, "validate") then return end
  Schema.validate = function(self, entity)
    local is_plugin = false
    for _, f in ipairs(self.fields or {}) do if type(f) == "table" and f.config then is_plugin = true end end
    if not is_plugin then
      error("broker: Schema:validate checks a plugin's schema (one with a config field); "
        .. tostring(self.name) .. " is not one (docs/pdk-test.md)", 2)
    end
    local conf, err = M.check_plugin(self, type(entity) == "table" and entity.config or nil)
    if not conf then return nil, err end
    return true
  end
end

return M
