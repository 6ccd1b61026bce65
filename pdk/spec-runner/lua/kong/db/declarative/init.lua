-- kong.db.declarative, broker's own (written from Kong's documented declarative config) and the one loader of a
-- declarative config in spec.helpers' in-memory Kong: the Admin API's POST /config, start_kong's
-- declarative_config and a spec's own calls all come here, as Kong routes them through its module of that name.
-- new_config():parse_string / parse_file / parse_table read Kong's format (YAML through broker.spec.yaml, JSON,
-- or a table: entities nested in the ones they reference, references by id or endpoint key) into
-- `{ <entity> = { [id] = row } }`; load_into_db(entities, meta) upserts those as Kong's DAO would, referenced
-- entities first (`meta._transform = false` keeps rows as Kong stored them: a password hashed already);
-- load_config replaces the whole database with a config, or leaves it as it was when any row is refused
-- (import.lua does the loading, as Kong's module splits it). The rest of Kong's module (exporting, loading into
-- the cache) raises naming itself.
local cjson = require "cjson.safe"
local entities = require "broker.spec.entities"
local import = require "kong.db.declarative.import"
local yaml = require "broker.spec.yaml"
local uuid = require "kong.tools.uuid"
local null = ngx.null
local M = {}

local FORMATS = { ["1.1"] = true, ["2.1"] = true, ["3.0"] = true }
local META = { _format_version = true, _transform = true, _comment = true, _workspace = true }
-- Kong's entities broker's in-memory Kong does not have: a config with them fails naming them
local NOT_EMULATED = { upstreams = true, targets = true, certificates = true, snis = true, ca_certificates = true,
  vaults = true, consumer_groups = true, keys = true, key_sets = true, filter_chains = true, partials = true }

-- Kong's errors as its declarative module prints them: one line per place, nested by indentation
local function pretty(errs, indent)
  local out, keys = {}, {}
  for k in pairs(errs) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) == type(b) then return a < b end
    return type(a) == "number"
  end)
  for _, k in ipairs(keys) do
    local v = errs[k]
    local where = type(k) == "number" and "- in entry " .. k or "in '" .. k .. "'"
    if type(v) ~= "table" then out[#out + 1] = indent .. (type(k) == "number" and "- " or where .. ": ") .. tostring(v)
    else
      out[#out + 1] = indent .. where .. ":"
      out[#out + 1] = pretty(v, indent .. "  ")
    end
  end
  return table.concat(out, "\n")
end

-- Lua's view of an error table as Kong's Admin API message prints it (pl.pretty.write with no indent), keys sorted
local function inline(v)
  if type(v) ~= "table" then return type(v) == "string" and string.format("%q", v) or tostring(v) end
  local parts, keys = {}, {}
  for i = 1, #v do parts[#parts + 1] = inline(v[i]) end
  for k in pairs(v) do if type(k) ~= "number" or k > #v or k < 1 then keys[#keys + 1] = k end end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. "=" .. inline(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- nil, the errors printed and the Admin API's error table (Kong's code 14)
local function invalid(fields, message)
  return nil, message or pretty(fields, ""), { code = 14, name = "invalid declarative configuration",
    fields = fields, message = message or ("declarative config is invalid: " .. inline(fields)) }
end

-- errs at the place `at` (a path of keys) gets `v`: a table's fields merged, a message added to the list there
local function put(errs, at, v)
  local t = errs
  for i = 1, #at - 1 do
    t[at[i]] = type(t[at[i]]) == "table" and t[at[i]] or {}
    t = t[at[i]]
  end
  local last = at[#at]
  t[last] = type(t[last]) == "table" and t[last] or {}
  if type(v) == "table" then for k, e in pairs(v) do t[last][k] = e end
  else t[last][#t[last] + 1] = v end
end

local known = import.known

-- the top of a config: its format and its keys; nil, or the errors (and a message for an entity not emulated)
local function check_top(conf)
  local fields = {}
  if conf._format_version == nil then fields._format_version = "required field missing"
  elseif type(conf._format_version) ~= "string" then fields._format_version = "expected a string"
  elseif not FORMATS[conf._format_version] then fields._format_version = "expected one of: 1.1, 2.1, 3.0" end
  for key in pairs(conf) do
    if NOT_EMULATED[key] then
      return fields, "the declarative configuration's " .. key .. " are not emulated by broker"
    end
    if not META[key] and not known(key) then fields[key] = "unknown field" end
  end
  if next(fields) then return fields end
end

-- Kong's format flattened: each row under its entity by id (one made up when it has none), a nested row given
-- its parent's id, a reference by id or endpoint key made `{ id = … }`; also where each row was (for errors)
local function flatten(conf)
  local out, added, errs = {}, {}, {}
  local function nested(k, v) return known(k) and type(v) == "table" and (v[1] ~= nil or next(v) == nil) end
  local function add(kind, row, at, parent_field, parent_id)
    if type(row) ~= "table" then return put(errs, at, "expected a record") end
    local flat = {}
    for k, v in pairs(row) do if not nested(k, v) then flat[k] = v end end
    if flat.id == nil or flat.id == null then flat.id = uuid.uuid() end
    if parent_field then flat[parent_field] = { id = parent_id } end
    out[kind] = out[kind] or {}
    out[kind][flat.id] = flat
    added[#added + 1] = { kind = kind, row = flat, at = at, parent_field = parent_field }
    for k, v in pairs(row) do
      if nested(k, v) then
        local field
        for f, parent in pairs(entities.info(k).foreign or {}) do if parent == kind then field = f end end
        if not field then put(errs, at, { [k] = "unknown field" })
        else
          for j, r in ipairs(v) do
            local sub = { table.unpack(at) }
            sub[#sub + 1] = k
            sub[#sub + 1] = j
            add(k, r, sub, field, flat.id)
          end
        end
      end
    end
  end
  local kinds = {}
  for kind in pairs(conf) do if not META[kind] then kinds[#kinds + 1] = kind end end
  table.sort(kinds)
  for _, kind in ipairs(kinds) do
    local list = conf[kind]
    if type(list) ~= "table" then errs[kind] = "expected an array"
    else for i, row in ipairs(list) do add(kind, row, { kind, i }) end end
  end
  for _, item in ipairs(added) do
    for field, parent in pairs(entities.info(item.kind).foreign or {}) do
      local v = item.row[field]
      local ref = type(v) == "table" and v.id or v
      if field ~= item.parent_field and type(ref) == "string" then
        local key, found = entities.info(parent).endpoint_key, nil
        for id, r in pairs(out[parent] or {}) do
          if id == ref or (key and r[key] == ref) then found = id end
        end
        if found then item.row[field] = { id = found }
        else
          put(errs, item.at, "invalid reference '" .. field .. ": " .. ref .. "' (no such entry in '" .. parent .. "')")
        end
      end
    end
  end
  local where = {}
  for _, item in ipairs(added) do where[item.row] = item.at end
  return out, next(errs) and errs or nil, where
end

local function decode(text, filename)
  if type(text) ~= "string" then return nil, "expected a string of the declarative config" end
  local name = tostring(filename or "")
  if name:match("%.json$") or (not name:match("%.ya?ml$") and text:match("^%s*{")) then
    return cjson.decode(text)
  end
  return yaml.decode(text)
end

-- a config read: the entities, its meta and where each row was; or nil, the message and the error table
local function parse(conf, filename)
  if type(conf) == "string" then
    local t, err = decode(conf, filename)
    if t == nil or t == null then err = err or "expected an object" end
    if err then
      local why = tostring(err)
      return invalid({ error = why }, "failed parsing declarative configuration: " .. why)
    end
    conf = t
  end
  if type(conf) ~= "table" then return invalid({ error = "expected an object" }) end
  local top, not_emulated = check_top(conf)
  if not_emulated then
    local _, text, err_t = invalid(top, not_emulated)
    err_t.not_emulated = true
    return nil, text, err_t
  end
  if top then return invalid(top) end
  local ents, errs, where = flatten(conf)
  if errs then return invalid(errs) end
  return ents, { _format_version = conf._format_version, _transform = conf._transform ~= false }, where
end

--- Kong's declarative config parser: parse_string(text, filename), parse_file(path), parse_table(t), each
--- answering the entities (load_into_db's shape), nil, nil, the meta and a hash; or nil, the errors printed
--- and the Admin API's error table.
function M.new_config()
  local dc = {}
  function dc:parse_table(t)
    local ents, meta, where = parse(t)
    if not ents then return nil, meta, where end
    return ents, nil, nil, meta, ngx.md5(cjson.encode(t) or "")
  end
  function dc:parse_string(text, filename)
    local ents, meta, where = parse(text, filename)
    if not ents then return nil, meta, where end
    return ents, nil, nil, meta, ngx.md5(text)
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

--- The database replaced by a declarative config (its text, or a table), as a DB-less Kong loads one: the rows
--- by entity and id; or nil, why (printed) and the Admin API's error table, the rows left as they were.
function M.load_config(config, filename)
  local ents, meta, where = parse(config, filename)
  if not ents then return nil, meta, where end
  local loaded, errs = import.replace(ents, meta, where)
  if not loaded then return invalid(errs) end
  return loaded
end

M.load_into_db = import.load_into_db

return setmetatable(M, { __index = function(_, name)
  error("kong.db.declarative." .. tostring(name) .. " is not emulated by broker (load_into_db is)", 2)
end })
