-- Kong's entities as spec.helpers' database fills and checks them (written for broker): the core
-- ones (services, routes, consumers, plugins) with Kong's defaults, and every loaded plugin's own
-- DAOs from its daos.lua (defaults, `auto` fields, foreign keys, unique fields, entity checks). A
-- refused row is Kong's error table (errors.lua), never a silent fix.
local errors = require "broker.spec.errors"
local uuid = require("kong.tools.uuid").uuid
local null = ngx.null
local M = {}

M.MOCK_HOST, M.MOCK_PORT = "127.0.0.1", 15555

-- the plugins a spec named in get_db_utils (their daos.lua are read); any loaded handler counts too
M.plugins = {}

local function ref(v)
  if v == nil or v == null then return v end
  if type(v) == "table" then return { id = v.id } end
  return { id = v }
end
M.ref = ref

local CORE = {
  services = { endpoint_key = "name", unique = { "name" } },
  routes = { endpoint_key = "name", unique = { "name" }, foreign = { service = "services" } },
  consumers = { endpoint_key = "username", unique = { "username", "custom_id" } },
  plugins = { foreign = { route = "routes", service = "services", consumer = "consumers" } },
}

-- Kong's bundled plugins that have DAOs: in a checkout of Kong they are there without being named
local BUNDLED_DAOS = { "key-auth", "basic-auth", "acl", "jwt", "hmac-auth", "oauth2", "session", "acme" }
-- the plugins Kong 3 bundles (kong/plugins/*), named when a spec enables one its root does not have
local KONG_BUNDLED = {}
for name in ([[acl acme ai-prompt-decorator ai-prompt-guard ai-prompt-template ai-proxy ai-request-transformer
  ai-response-transformer aws-lambda azure-functions basic-auth bot-detection correlation-id cors datadog file-log
  grpc-gateway grpc-web hmac-auth http-log ip-restriction jwt key-auth ldap-auth loggly oauth2 opentelemetry
  post-function pre-function prometheus proxy-cache rate-limiting redirect request-size-limiting request-termination
  request-transformer response-ratelimiting response-transformer session standard-webhooks statsd syslog tcp-log
  udp-log zipkin]]):gmatch("%S+") do KONG_BUNDLED[name] = true end

-- a plugin's daos.lua, read once per VM (a missing one is a search of every root)
local read = {}
local function daos_of(plugin)
  if read[plugin] then return read[plugin] end
  local ok, daos = pcall(require, "kong.plugins." .. plugin .. ".daos")
  read[plugin] = (ok and type(daos) == "table") and (daos[1] and daos or { daos }) or {}
  return read[plugin]
end

--- The loaded plugins' DAO definitions, by DAO name.
function M.daos()
  local names = {}
  for p in pairs(M.plugins) do names[p] = true end
  for _, p in ipairs(BUNDLED_DAOS) do names[p] = true end
  for mod in pairs(package.loaded) do
    local p = type(mod) == "string" and mod:match("^kong%.plugins%.([^.]+)%.handler$")
    if p then names[p] = true end
  end
  local out = {}
  for p in pairs(names) do
    for _, d in ipairs(daos_of(p)) do
      if type(d.name) == "string" then
        local unique, foreign = {}, {}
        for _, f in ipairs(d.fields or {}) do
          local fname, def = next(f)
          if def.unique then unique[#unique + 1] = fname end
          if def.type == "foreign" then foreign[fname] = def.reference end
        end
        local key = d.endpoint_key
        -- acls: a row is named within its consumer by the second part of its cache key (the group)
        if not key and type(d.cache_key) == "table" and d.cache_key[1] == "consumer" then key = d.cache_key[2] end
        out[d.name] = { def = d, unique = unique, foreign = foreign, endpoint_key = key, ttl = d.ttl,
          api = d.admin_api_name or d.name, nested = d.admin_api_nested_name or d.admin_api_name or d.name,
          generate = d.generate_admin_api ~= false }
      end
    end
  end
  return out
end

--- What spec.helpers knows of an entity: its endpoint key, unique and foreign fields.
function M.info(name)
  return CORE[name] or M.daos()[name] or { unique = {}, foreign = {} }
end

local function parse_url(url)
  local protocol, host, port, path = url:match("^(%a[%w+.-]*)://([^:/?#]+):?(%d*)([^?#]*)")
  if not protocol then return nil end
  port = tonumber(port) or ((protocol == "https" or protocol == "grpcs") and 443 or 80)
  return protocol, host, port, path ~= "" and path or nil
end

local DEFAULTS = {}
function DEFAULTS.services(row)
  if row.url then
    local protocol, host, port, path = parse_url(row.url)
    if not protocol then return nil, errors.schema_violation({ url = "missing host in url" }) end
    row.protocol, row.host, row.port, row.path = protocol, host, port, path
    row.url = nil
  end
  row.protocol = row.protocol or "http"
  row.host = row.host or M.MOCK_HOST
  row.port = row.port or (row.host == M.MOCK_HOST and M.MOCK_PORT or (row.protocol == "https" and 443 or 80))
  row.retries = row.retries or 5
  row.connect_timeout = row.connect_timeout or 60000
  row.write_timeout = row.write_timeout or 60000
  row.read_timeout = row.read_timeout or 60000
  if row.enabled == nil then row.enabled = true end
  return row
end

function DEFAULTS.routes(row, insert)
  row.protocols = row.protocols or { "http", "https" }
  row.regex_priority = row.regex_priority or 0
  if row.strip_path == nil then row.strip_path = true end
  if row.preserve_host == nil then row.preserve_host = false end
  row.https_redirect_status_code = row.https_redirect_status_code or 426
  row.path_handling = row.path_handling or "v0"
  if row.request_buffering == nil then row.request_buffering = true end
  if row.response_buffering == nil then row.response_buffering = true end
  -- Kong's test blueprints give a route without a service one of its own, to the mock upstream, unless
  -- asked for none (`no_service = true`, which is not a field); the Admin API does not (insert is nil there)
  local no_service = insert and row.no_service == true
  if insert then row.no_service = nil end
  if row.service == nil and insert and not no_service then row.service = { id = insert("services", {}).id } end
  row.service = ref(row.service)
  return row
end

function DEFAULTS.consumers(row)
  if (row.username == nil or row.username == null) and (row.custom_id == nil or row.custom_id == null) then
    return nil, errors.schema_violation({ ["@entity"] = {
      "at least one of these fields must be non-empty: 'custom_id', 'username'" } })
  end
  return row
end

--- Whether the root has a kong-js-pdk plugin of this name (js-plugins/<name>.js), as the host finds it.
function M.js_plugin(name)
  local answer = coroutine.yield("host", "js_plugin", { name = name })
  return type(answer) == "table" and answer.body ~= nil and answer.body ~= ""
end

function DEFAULTS.plugins(row)
  if type(row.name) ~= "string" then return nil, errors.schema_violation({ name = "required field missing" }) end
  local ok, schema = pcall(require, "kong.plugins." .. row.name .. ".schema")
  if not ok and M.js_plugin(row.name) then
    -- a JS plugin's config is its own to check (its Schema is kong-js-pdk's, not a schema.lua)
    if row.enabled == nil then row.enabled = true end
    row.config = row.config or {}
    row.protocols = row.protocols or { "grpc", "grpcs", "http", "https" }
    row.route, row.service, row.consumer = ref(row.route), ref(row.service), ref(row.consumer)
    return row
  end
  if not ok then
    local hint = ""
    if KONG_BUNDLED[row.name] then
      -- a plugin repository's spec enabling one of Kong's own plugins beside its plugin (basic-auth before its
      -- upstream-basic-auth): Kong's tree is not in this root, and broker ships none of Kong's plugins
      hint = " (it is one of Kong's bundled plugins, whose source is not under this root: put a Kong checkout on"
        .. " the path, --lua-path /path/to/kong or LUA_PATH='/path/to/kong/?.lua;/path/to/kong/?/init.lua;;')"
    end
    return nil, errors.schema_violation({
      name = "plugin '" .. row.name .. "' not enabled; add it to the 'plugins' configuration property" .. hint })
  end
  local conf, tree = errors.check_plugin(schema, row.config or {})
  if not conf then return nil, errors.schema_violation(tree) end
  row.config = conf
  if row.enabled == nil then row.enabled = true end
  row.protocols = row.protocols or { "grpc", "grpcs", "http", "https" }
  row.route, row.service, row.consumer = ref(row.route), ref(row.service), ref(row.consumer)
  return row
end

-- a string field with `auto`: Kong's random string (a uuid for uuid fields)
local function auto_value(def)
  if def.uuid then return uuid() end
  return (uuid():gsub("-", ""))
end

-- Kong's check of a DAO's transformations (basic-auth hashes the password with the consumer's id): the
-- fields one reads are given together, and again when an update moves what it `needs` (`input` is what the
-- caller gave, `rbw` the row an update reads before it writes)
local function transformation_errors(d, row, input, rbw)
  local schema = require "broker.schema"
  local get, nonempty = schema.field, schema.nonempty
  -- "all or none" of `names` in `t`: nil, or the names quoted as Kong lists them
  local function not_all_or_none(t, names)
    local ok, list = schema.all_or_none(t, names)
    if not ok then return list end
  end
  local out = {}
  for _, t in ipairs(d.transformations or {}) do
    local names, none_set, needs_changed = {}, true, false
    for _, f in ipairs(t.input or {}) do
      if nonempty(get(input or row, f)) then none_set = false end
      names[#names + 1] = f
    end
    for _, f in ipairs(t.needs or {}) do
      if rbw and not needs_changed and get(input or row, f) ~= get(rbw, f) then needs_changed = true end
      names[#names + 1] = f
    end
    if needs_changed or not none_set then
      local list = not_all_or_none(needs_changed and input or row, names)
        or not_all_or_none(input or row, t.input or {})
      if list then out[#out + 1] = "all or none of these fields must be set: " .. list end
    end
  end
  return out
end

-- a plugin's own DAO (daos.lua): its fields checked and filled as Kong's schema does
local function dao_row(info, row, input, rbw)
  local d = info.def
  local given = {}
  for k, v in pairs(row) do
    if k ~= "id" and k ~= "created_at" and k ~= "updated_at" and not (k == "ttl" and info.ttl) then given[k] = v end
  end
  for fname, _ in pairs(info.foreign) do given[fname] = ref(given[fname]) end
  for _, f in ipairs(d.fields or {}) do
    local fname, def = next(f)
    if given[fname] == nil and def.auto and def.type == "string" and fname ~= "id" then given[fname] = auto_value(def) end
  end
  local record = { type = "record", fields = {}, entity_checks = d.entity_checks }
  for _, f in ipairs(d.fields or {}) do
    local fname = next(f)
    if fname ~= "id" and fname ~= "created_at" and fname ~= "updated_at" then record.fields[#record.fields + 1] = f end
  end
  local out, errs = require("broker.schema").process({ fields = { { config = record } } }, given)
  local moved = transformation_errors(d, given, input, rbw)
  if errs or #moved > 0 then
    local tree = errors.tree(errs or {})
    if type(tree) ~= "table" then tree = { ["@entity"] = { tree } } end
    if #moved > 0 then
      tree["@entity"] = tree["@entity"] or {}
      for _, m in ipairs(moved) do table.insert(tree["@entity"], m) end
    end
    return nil, errors.schema_violation(tree)
  end
  for k, v in pairs(out) do row[k] = v end
  return row
end

-- a config using a deprecated shorthand field is warned of in Kong's error.log, as kong.deprecation words it
require("broker.schema").on_deprecation = function(message, after)
  require("broker.spec.logfile").append({ os.date("%Y/%m/%d %H:%M:%S") .. " [warn] 1#0: [kong] init.lua:905 "
    .. message .. (after and (" (deprecated after " .. after .. ")") or "") })
end

--- The row as Kong stores it: a copy with its DAO's transformations applied (basic-auth's hashed
--- password) and its ttl as the seconds left, as kong.db (broker.db) reads the rows kept here.
function M.present(name, row)
  -- a plugin's config as Kong reads it back: a required field stored as null (a row written in SQL) as
  -- its default, and its deprecated shorthand fields beside the new ones
  if name == "plugins" and type(row) == "table" and type(row.config) == "table" then
    local ok, schema = pcall(require, "kong.plugins." .. tostring(row.name) .. ".schema")
    if ok and type(schema) == "table" then
      local out = {}
      for k, v in pairs(row) do out[k] = v end
      local processing = require("broker.schema")
      out.config = processing.with_shorthands(schema, processing.as_read(schema, row.config))
      return out
    end
    return row
  end
  local info = M.daos()[name]
  local list = info and info.def.transformations
  local ttl = type(row) == "table" and type(row.ttl) == "number"
  if not ttl and (not list or type(row) ~= "table" or require("broker.db").as_stored[row]) then return row end
  local out = {}
  for k, v in pairs(row) do out[k] = v end
  -- Kong's DAO gives a row's ttl as the seconds it has left
  if ttl then out.ttl = math.max(0, math.floor((tonumber(row.created_at) or 0) + row.ttl - ngx.now())) end
  if list and not require("broker.db").as_stored[row] then
    require("broker.db").apply_transformations({ transformations = list }, out)
  end
  return out
end

--- Whether `input` gives a field one of the DAO's transformations reads (an update then transforms the row).
function M.transforms(name, input)
  local info = M.daos()[name]
  for _, t in ipairs(info and info.def.transformations or {}) do
    for _, f in ipairs(t.input or {}) do
      if type(input) == "table" and input[f] ~= nil then return true end
    end
  end
  return false
end

--- The row with Kong's defaults, checked; or nil and Kong's error table. `insert` makes a related row
--- (the blueprints' service of a route), nil from the Admin API; `input` is what the caller gave (an
--- update's patch) and `rbw` the row an update replaces.
--- Kong's Entity:validate_insert on a plugin's entity: every field checked, none filled (defaults and auto
--- values are process_auto_fields' work, not validation's): true, or nil and the tree of field errors.
function M.validate_insert(name, entity)
  local info = M.daos()[name]
  if not info then
    error("broker: validate_insert checks a plugin's entity (its daos.lua); " .. tostring(name) .. " is not one", 2)
  end
  local record = { type = "record", fields = {}, entity_checks = info.def.entity_checks }
  for _, f in ipairs(info.def.fields or {}) do
    local fname, def = next(f)
    local bare = {}
    if def.type == "foreign" then
      -- a foreign key is checked as the primary key it names
      bare = { type = "record", required = def.required, fields = { { id = { type = "string", uuid = true, required = true } } } }
    else
      for k, v in pairs(def) do if k ~= "default" then bare[k] = v end end
    end
    record.fields[#record.fields + 1] = { [fname] = bare }
  end
  local _, errs = require("broker.schema").process({ fields = { { config = record } } }, entity)
  if errs then return nil, errors.tree(errs) end
  return true
end

function M.prepare(name, row, insert, input, rbw)
  if DEFAULTS[name] then return DEFAULTS[name](row, insert) end
  local info = M.daos()[name]
  if info then return dao_row(info, row, input, rbw) end
  return row
end

return M
