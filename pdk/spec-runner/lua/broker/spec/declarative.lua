-- Kong's declarative configuration as the Admin API's POST /config of a DB-less Kong loads it (written for broker
-- from Kong's declarative format documentation): the entities replace the whole in-memory database in one go,
-- nested ones under their parent (a service's routes and plugins, a consumer's plugins and credentials), top-level
-- references by id or endpoint key (`service: name`); a refused entity refuses all, as Kong's
-- `invalid declarative configuration` naming where; nothing of the configuration runs while it loads.
local cjson = require "cjson.safe"
local db = require "broker.spec.db"
local entities = require "broker.spec.entities"
local yaml = require "broker.spec.yaml"
local M = {}

local FORMATS = { ["1.1"] = true, ["2.1"] = true, ["3.0"] = true }
local META = { _format_version = true, _transform = true, _comment = true, _workspace = true }
-- Kong's entities broker's in-memory Kong does not have: a configuration with them fails naming them
local NOT_EMULATED = { upstreams = true, targets = true, certificates = true, snis = true, ca_certificates = true,
  vaults = true, consumer_groups = true, keys = true, key_sets = true, filter_chains = true, partials = true }

-- what may nest under what, with the field that points at the parent
local NESTED = {
  services = { routes = "service", plugins = "service" },
  routes = { plugins = "route" },
  consumers = { plugins = "consumer" },
}

local function credentials()
  local out = {}
  for name, info in pairs(entities.daos()) do
    if info.foreign and info.foreign.consumer == "consumers" then out[name] = true end
  end
  return out
end

--- The configuration a POST /config names: the body's own table, its `config` (YAML or JSON), or the raw body;
--- or nil and Kong's error table.
function M.read(params, raw)
  if type(params) == "table" and params._format_version ~= nil then return params end
  local text = type(params) == "table" and params.config or nil
  if text == nil then text = raw end
  if type(text) ~= "string" or text == "" then return nil, { message = "expected a declarative configuration" } end
  local conf, err = yaml.decode(text)
  if type(conf) ~= "table" then
    local why = err or "expected an object"
    return nil, { code = 14, name = "invalid declarative configuration",
      message = "failed parsing declarative configuration: " .. why, fields = { error = why } }
  end
  return conf
end

-- Lua's view of an error table as Kong's message prints it (pl.pretty.write with no indent), keys sorted
local function pretty(v)
  if type(v) ~= "table" then return type(v) == "string" and string.format("%q", v) or tostring(v) end
  local parts, keys = {}, {}
  for i = 1, #v do parts[#parts + 1] = pretty(v[i]) end
  for k in pairs(v) do if type(k) ~= "number" or k > #v or k < 1 then keys[#keys + 1] = k end end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. "=" .. pretty(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- the id a top-level reference names: an id, `{ id = … }`, or the endpoint key of a row loaded before it
local function reference(dao, ref)
  if type(ref) == "table" then ref = ref.id end
  if type(ref) ~= "string" then return ref end
  local key = entities.info(dao).endpoint_key
  for _, r in ipairs(db.rows(dao)) do
    if r.id == ref or (key and r[key] == ref) then return r.id end
  end
  return ref
end

local FOREIGN = { service = "services", route = "routes", consumer = "consumers" }

--- Loads `conf` in place of every row: the rows by entity and id, as Kong answers; or nil and Kong's error table.
function M.load(conf)
  local fields = {}
  if conf._format_version == nil then fields._format_version = "required field missing"
  elseif type(conf._format_version) ~= "string" then fields._format_version = "expected a string"
  elseif not FORMATS[conf._format_version] then
    fields._format_version = "expected one of: 1.1, 2.1, 3.0"
  end
  local creds = credentials()
  for key in pairs(conf) do
    if NOT_EMULATED[key] then
      return nil, nil, "the declarative configuration's " .. key .. " are not emulated by broker"
    end
    if not META[key] and not NESTED[key] and key ~= "plugins" and not creds[key] then fields[key] = "unknown field" end
  end
  if next(fields) then
    return nil, { code = 14, name = "invalid declarative configuration",
      message = "declarative config is invalid: " .. pretty(fields), fields = fields }
  end

  -- the rows as they were, for a configuration refused halfway
  local saved = {}
  local store = require("broker.db").given
  for name, list in pairs(store) do saved[name] = list end
  db.truncate()

  local loaded = {}
  local function add(dao, list, errs, parent_field, parent_id)
    if list == nil then return end
    if type(list) ~= "table" then errs[dao] = "expected an array" return end
    for i, given in ipairs(list) do
      local row, nested = {}, {}
      for k, v in pairs(given) do
        if (NESTED[dao] and NESTED[dao][k]) or (dao == "consumers" and creds[k]) then nested[k] = v
        else row[k] = v end
      end
      if parent_field then row[parent_field] = { id = parent_id } end
      local foreign = entities.info(dao).foreign or {}
      for field, target in pairs(FOREIGN) do
        if field ~= parent_field and row[field] ~= nil and row[field] ~= cjson.null and foreign[field] == target then
          row[field] = { id = reference(target, row[field]) }
        end
      end
      local inserted, err_t = db.try_insert(dao, row)
      if not inserted then
        errs[dao] = errs[dao] or {}
        errs[dao][i] = err_t.fields or { ["@entity"] = { err_t.message } }
      else
        loaded[dao] = loaded[dao] or {}
        loaded[dao][inserted.id] = entities.present(dao, inserted)
        local child_errs = {}
        for k, v in pairs(nested) do add(k, v, child_errs, NESTED[dao] and NESTED[dao][k] or "consumer", inserted.id) end
        if next(child_errs) then
          errs[dao] = errs[dao] or {}
          errs[dao][i] = errs[dao][i] or {}
          for k, v in pairs(child_errs) do errs[dao][i][k] = v end
        end
      end
    end
  end
  local errs = {}
  add("services", conf.services, errs)
  add("routes", conf.routes, errs)
  add("consumers", conf.consumers, errs)
  local names = {}
  for name in pairs(creds) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do add(name, conf[name], errs) end
  add("plugins", conf.plugins, errs)

  if next(errs) then
    for k in pairs(store) do store[k] = nil end
    for name, list in pairs(saved) do store[name] = list end
    require("broker.db").reset()
    return nil, { code = 14, name = "invalid declarative configuration",
      message = "declarative config is invalid: " .. pretty(errs), fields = errs }
  end
  return loaded
end

return M
