-- Kong's Admin API behind spec.helpers' admin_client (written for broker from Kong's Admin API
-- documentation): the endpoints plugin specs use, on the same in-memory rows as the blueprints and
-- kong.db (db.lua), so a change is what the next proxied request sees. Services, routes, consumers
-- and plugins, the credentials of every loaded plugin's daos.lua (`/consumers/:c/key-auth`,
-- `/key-auths/:key` …), plugins nested under a route, service or consumer, and a refused entity as
-- Kong answers it (400 `schema violation` naming each field, 409 on a unique field, 404).
local cjson = require "cjson.safe"
local db = require "broker.spec.db"
local entities = require "broker.spec.entities"
local is_uuid = require("kong.tools.uuid").is_valid_uuid
local decode_body = require("broker.spec.admin_body").decode
local plugin_routes = require "broker.spec.admin_routes"
local M = {}

local JSON = { ["Content-Type"] = "application/json; charset=utf-8" }

local function answer(status, body)
  if body == nil then return { status = status, headers = {}, body = "" } end
  return { status = status, headers = JSON, body = cjson.encode(body) }
end
local function message(status, text) return answer(status, { message = text }) end
local function refused(err_t)
  return answer(err_t.status, { code = err_t.code, name = err_t.name, message = err_t.message, fields = err_t.fields })
end

-- the API's collections: Kong's core entities and every loaded plugin's DAOs, by their URL names
local function collections()
  local by_url, nested = {
    consumers = "consumers", routes = "routes", services = "services", plugins = "plugins",
  }, { consumers = { plugins = "plugins" }, routes = { plugins = "plugins" },
    services = { plugins = "plugins", routes = "routes" } }
  for name, info in pairs(entities.daos()) do
    if info.generate then
      by_url[info.api] = name
      for field, parent in pairs(info.foreign) do
        if field == "consumer" and parent == "consumers" then nested.consumers[info.nested] = name end
      end
    end
  end
  return by_url, nested
end

local PARENT_FIELD = { consumers = "consumer", routes = "route", services = "service" }

-- the row a URL names: its id, else its endpoint key (a consumer's username, a credential's key),
-- within the parent row when nested
local function select(dao, key, parent_field, parent)
  local info = entities.info(dao)
  for _, r in ipairs(db.rows(dao)) do
    local named = r.id == key or (not is_uuid(key) and info.endpoint_key and r[info.endpoint_key] == key)
    local child = not parent or (type(r[parent_field]) == "table" and r[parent_field].id == parent.id)
    if named and child then return r end
  end
  -- a consumer named by custom_id is not found by Kong either; a name that looks like a uuid may be a key
  if is_uuid(key) and info.endpoint_key then
    for _, r in ipairs(db.rows(dao)) do
      if r[info.endpoint_key] == key and (not parent or (r[parent_field] or {}).id == parent.id) then return r end
    end
  end
end

-- a plugin's entity as Kong's Admin API shows it (its DAO reads with `nulls = true`): a field the row has no
-- value for is null, a record's own fields too
local function with_nulls(fields, row)
  local out = {}
  for k, v in pairs(row) do out[k] = v end
  for _, f in ipairs(fields) do
    local name, def = next(f)
    local v = out[name]
    if v == nil then out[name] = cjson.null
    elseif type(def) == "table" and def.type == "record" and type(v) == "table" and def.fields then
      out[name] = with_nulls(def.fields, v)
    end
  end
  return out
end
local function shown(dao, row, fields)
  row = entities.present(dao, row)
  if fields == nil then fields = (entities.info(dao).def or {}).fields or false end
  return fields and with_nulls(fields, row) or row
end

-- a page of `size` rows (100) from `offset` (an opaque token: here the index of the next row)
local function list(req, dao, rows, field, parent)
  local args = ngx.decode_args(type(req.query) == "string" and req.query or (req.path:match("%?(.*)$") or ""), 0)
  local size = tonumber(args.size) or 100
  local from = tonumber(args.offset) or 1
  local all = {}
  for _, r in ipairs(rows) do
    if not parent or (type(r[field]) == "table" and r[field].id == parent.id) then all[#all + 1] = r end
  end
  local data = setmetatable({}, cjson.array_mt)
  local fields = (entities.info(dao).def or {}).fields or false
  for i = from, math.min(#all, from + size - 1) do data[#data + 1] = shown(dao, all[i], fields) end
  local rest = from + size <= #all
  local path = req.path:gsub("%?.*$", "")
  return answer(200, { data = data, offset = rest and tostring(from + size) or nil,
    next = rest and (path .. "?offset=" .. (from + size) .. "&size=" .. size) or cjson.null })
end

local function collection(method, req, dao, field, parent)
  if method == "GET" then return list(req, dao, db.rows(dao), field, parent) end
  if method ~= "POST" then return message(405, "Method not allowed") end
  local body, err = decode_body(req, dao)
  if not body then return message(400, err) end
  if parent then body[field] = { id = parent.id } end
  local row, err_t = db.try_insert(dao, body)
  if not row then return refused(err_t) end
  return answer(201, shown(dao, row))
end

local function entity(method, req, dao, key, field, parent)
  local row = select(dao, key, field, parent)
  if method == "GET" then
    if not row then return message(404, "Not found") end
    return answer(200, shown(dao, row))
  elseif method == "DELETE" then
    -- Kong answers 204 for a row that is not there, but 404 under a parent that does not have it
    if not row then return answer(parent and 404 or 204, parent and { message = "Not found" } or nil) end
    local ok, err_t = db.delete(dao, row.id)
    if not ok then return refused(err_t) end
    return answer(204)
  elseif method == "PATCH" or method == "PUT" then
    local body, err = decode_body(req, dao)
    if not body then return message(400, err) end
    if parent then body[field] = { id = parent.id } end
    local updated, err_t
    if method == "PATCH" then
      if not row then return message(404, "Not found") end
      updated, err_t = db.update(dao, row.id, body)
    else
      -- Kong's upsert_by_<endpoint key> sets the key from the URL, whether the row exists or not
      local info = entities.info(dao)
      if not is_uuid(key) and info.endpoint_key then body[info.endpoint_key] = key end
      updated, err_t = db.upsert(dao, row and row.id or (is_uuid(key) and key or nil), body)
    end
    if not updated then return refused(err_t) end
    return answer(200, shown(dao, updated))
  end
  return message(405, "Method not allowed")
end

local function plugin_schema(name)
  local ok, schema = pcall(require, "kong.plugins." .. tostring(name) .. ".schema")
  if not ok or type(schema) ~= "table" then return message(404, "No plugin named '" .. tostring(name) .. "'") end
  -- what JSON can say of it: the functions (custom validators) left out
  local function plain(v, seen)
    if type(v) ~= "table" then return type(v) ~= "function" and v or nil end
    if seen[v] then return nil end
    seen[v] = true
    local out = {}
    for k, x in pairs(v) do out[k] = plain(x, seen) end
    seen[v] = nil
    return setmetatable(out, getmetatable(v))
  end
  return answer(200, { fields = plain(schema.fields, {}) })
end

local function enabled_plugins()
  local names = {}
  for mod in pairs(package.loaded) do
    local p = type(mod) == "string" and mod:match("^kong%.plugins%.([^.]+)%.handler$")
    if p then names[#names + 1] = p end
  end
  table.sort(names)
  return setmetatable(names, cjson.array_mt)
end

-- POST /config of a DB-less Kong: the declarative configuration replaces every row, through kong.db.declarative
-- as Kong's route goes; its body is the config itself, its `config` (YAML or JSON), or the raw text
local function config(method, req)
  if method ~= "POST" then return nil, "spec.helpers.admin_client(): the Admin API's " .. method .. " /config is not emulated by broker yet" end
  if kong.configuration.database ~= "off" then
    return message(400, "this endpoint is only available when Kong is configured to not use a database")
  end
  local query = ngx.decode_args(type(req.query) == "string" and req.query or (req.path:match("%?(.*)$") or ""), 0)
  if query.flatten_errors == "1" or query.flatten_errors == "true" then
    return nil, "spec.helpers.admin_client(): POST /config?flatten_errors is not emulated by broker yet"
  end
  local params = decode_body(req, "config")
  local conf = params
  if type(params) ~= "table" or params._format_version == nil then
    conf = type(params) == "table" and params.config or nil
    if conf == nil then conf = req.body end
    if type(conf) ~= "string" or conf == "" then return message(400, "expected a declarative configuration") end
  end
  local loaded, why, err_t = require("kong.db.declarative").load_config(conf)
  if not loaded and err_t.not_emulated then return nil, "spec.helpers.admin_client(): " .. why end
  if not loaded then return answer(400, err_t) end
  return answer(201, loaded)
end

-- Kong's endpoints broker does not answer: a spec reaching one fails naming it (a 404 would pass unseen)
local NOT_EMULATED = {}
for _, name in ipairs({ "upstreams", "targets", "certificates", "snis", "ca_certificates", "vaults", "keys",
  "key-sets", "workspaces", "consumer_groups", "clustering", "debug", "timers", "filter-chains",
  "tags", "endpoints", "partials", "licenses", "rbac", "admins" }) do
  NOT_EMULATED[name] = true
end

-- whether a DAO's generated endpoint has `pattern` (`/consumers/:c/acls/:a`), which a plugin's api.lua may customize
local function generated(pattern)
  local by_url, nested = collections()
  local p = {}
  for seg in pattern:gmatch("[^/]+") do p[#p + 1] = seg end
  local dao = by_url[p[1]]
  if not dao or #p > 4 then return false end
  if #p == 1 then return true end
  if not p[2]:find("^:") then return false end
  if #p == 2 then return true end
  local info = entities.info(dao)
  if #p == 3 and info.foreign and info.foreign[p[3]] then return true end
  if not (nested[dao] and nested[dao][p[3]]) then return false end
  return #p == 3 or p[4]:find("^:") ~= nil
end

--- One Admin API request: `{ method, path, query, headers, body }` → `{ status, headers, body }`.
function M.handle(req, generic_only)
  local method = req.method
  local parts = {}
  for p in req.path:gsub("[?#].*$", ""):gmatch("[^/]+") do parts[#parts + 1] = ngx.unescape_uri(p) end
  -- an enabled plugin's own route (its api.lua), which may customize a generated one (`parent`: this one's)
  if not generic_only then
    local routed = plugin_routes.answer(req, generated, function(r) return M.handle(r, true) end)
    if routed then return routed end
  end
  local by_url, nested = collections()
  local a, b, c, d = parts[1], parts[2], parts[3], parts[4]
  if #parts > 4 then return message(404, "Not found") end
  if a == nil then
    return answer(200, { tagline = "Welcome to kong", version = "3.9.1", configuration = { database = "postgres" },
      plugins = { enabled_in_cluster = enabled_plugins(), available_on_server = {} } })
  end
  if a == "status" and not b then return answer(200, { database = { reachable = true }, server = {} }) end
  if a == "plugins" and b == "enabled" and not c then return answer(200, { enabled_plugins = enabled_plugins() }) end
  if a == "schemas" and b == "plugins" and c and not d then return plugin_schema(c) end
  if a == "plugins" and b == "schema" and c and not d then return plugin_schema(c) end
  if a == "cache" then
    local cache = require("broker.db").cache
    if not b then
      if method ~= "DELETE" then return message(405, "Method not allowed") end
      cache:purge()
      return answer(204)
    end
    if method == "DELETE" then cache:invalidate(b) return answer(204) end
    local _, _, value = cache:probe(b)
    if value == nil then return message(404, "Not found") end
    return answer(200, type(value) == "table" and value or { message = value })
  end
  if a == "config" and not b then
    local answered, raise = config(method, req)
    if raise then return { raise = raise } end
    return answered
  end
  local dao = by_url[a]
  if not dao and NOT_EMULATED[a] then
    return { raise = "spec.helpers.admin_client(): the Admin API's /" .. a .. " (" .. method .. " " .. req.path
      .. ") is not emulated by broker yet" }
  end
  if not dao then return message(404, "Not found") end
  if not b then return collection(method, req, dao) end
  if not c then return entity(method, req, dao, b) end
  local parent = select(dao, b)
  -- /routes/:r/service, /key-auths/:k/consumer: the row a foreign key names
  local info = entities.info(dao)
  if not d and info.foreign and info.foreign[c] then
    if method ~= "GET" then return message(405, "Method not allowed") end
    local ref = parent and parent[c]
    local row = type(ref) == "table" and db.find(info.foreign[c], ref.id)
    if not row then return message(404, "Not found") end
    return answer(200, row)
  end
  local child = nested[dao] and nested[dao][c]
  if not child then return message(404, "Not found") end
  if not parent then return message(404, "Not found") end
  local field = PARENT_FIELD[dao]
  if not d then return collection(method, req, child, field, parent) end
  return entity(method, req, child, d, field, parent)
end

return M
