-- Plugins' own Admin API endpoints (written for broker from how Kong's Admin API treats a plugin's api.lua):
-- the routes of each enabled plugin's kong/plugins/<name>/api.lua, matched by their `/path/:param` patterns,
-- the handler run by Kong in process in the admin_api phase (admin-route.ts) as Kong runs one:
-- handler(self, db, helpers) with self.params (the query args, a form body and the URL's params; a JSON body
-- over them), db (kong.db when the module's routes carry a schema, an empty table otherwise),
-- helpers.yield_error; the answer is kong.response.exit's or what the handler printed. A route that a
-- DAO's generated endpoint already has (`/consumers/:consumers/acls/:acls`) customizes it: its handler gets
-- `parent`, which answers as admin.lua's endpoint does.
local cjson = require "cjson.safe"
local client = require "broker.spec.client"
local M = {}

local JSON = { ["Content-Type"] = "application/json; charset=utf-8" }
local HTTP_METHODS = { "CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE" }
local NEEDS_BODY = { POST = true, PUT = true, PATCH = true }

local function split(path)
  local parts = {}
  for seg in path:gmatch("[^/]+") do parts[#parts + 1] = seg end
  return parts
end

-- the plugins Kong would load an api.lua for: those start_kong names, those configured, those loaded
local function plugin_names()
  local seen, names = {}, {}
  local function add(n)
    if type(n) == "string" and n ~= "bundled" and n ~= "off" and not seen[n] then
      seen[n] = true
      names[#names + 1] = n
    end
  end
  local conf = kong and kong.configuration and kong.configuration.plugins
  if type(conf) == "table" then for _, n in ipairs(conf) do add(n) end end
  for _, r in ipairs(require("broker.spec.db").rows("plugins")) do add(r.name) end
  for mod in pairs(package.loaded) do add(type(mod) == "string" and mod:match("^kong%.plugins%.([^.]+)%.handler$")) end
  table.sort(names)
  return names
end

-- a plugin's api.lua: its table, false when it has none, or nil and why it failed to load (Kong would not start)
local function api_of(name)
  local modname = "kong.plugins." .. name .. ".api"
  if package.loaded[modname] ~= nil then return type(package.loaded[modname]) == "table" and package.loaded[modname] end
  -- loaded as Kong loads its Admin API, in nginx's init phase, after the plugin's handler (prometheus's starts
  -- the counters its api.lua reads when it loads)
  __broker_loading = true
  pcall(require, "kong.plugins." .. name .. ".handler")
  local ok, mod = pcall(require, modname)
  __broker_loading = false
  if ok then return type(mod) == "table" and mod end
  if tostring(mod):find("module '" .. modname .. "' not found", 1, true) then return false end
  return nil, modname .. " failed to load: " .. tostring(mod)
end

-- every route, the most specific first: literal ones, then by fewer params and more segments
local function routes(generated)
  local list, failed = {}, nil
  for _, name in ipairs(plugin_names()) do
    local mod, err = api_of(name)
    failed = failed or err
    if mod then
      -- a module whose routes carry a schema is attached as Kong's DAO routes are: they get kong.db
      local new_db = false
      for _, verbs in pairs(mod) do if type(verbs) == "table" and verbs.schema then new_db = true end end
      for pattern, verbs in pairs(mod) do
        if type(pattern) == "string" and pattern:sub(1, 1) == "/" and type(verbs) == "table" then
          local parts, params = split(pattern), 0
          for _, p in ipairs(parts) do if p:find("^[:*]") then params = params + 1 end end
          list[#list + 1] = { pattern = pattern, parts = parts, params = params, methods = verbs.methods or verbs,
            new_db = new_db, override = generated(pattern) }
        end
      end
    end
  end
  table.sort(list, function(a, b)
    if a.params ~= b.params then return a.params < b.params end
    if #a.parts ~= #b.parts then return #a.parts > #b.parts end
    return a.pattern < b.pattern
  end)
  return list, failed
end

-- the URL's params when `parts` fit the route (`:name` one segment, a last `*` the rest), as given (not unescaped)
local function fit(route, parts)
  local params, rp = {}, route.parts
  for i, p in ipairs(rp) do
    if p == "*" and i == #rp then
      if not parts[i] then return nil end
      params.splat = table.concat(parts, "/", i)
      return params
    end
    local name = p:match("^:([%w_]+)$")
    if not parts[i] then return nil end
    if name then params[name] = parts[i] elseif p ~= parts[i] then return nil end
  end
  if #parts ~= #rp then return nil end
  return params
end

-- `a.b=1&c[1]=x` form keys as nested tables, and a form's "true", "false" and "" as Kong's Admin API reads them
local function form_value(v)
  if v == "" then return ngx.null elseif v == "true" then return true elseif v == "false" then return false end
  return v
end
local function normalize(params, form)
  local out = {}
  for key, value in pairs(params) do
    if form then
      if type(value) == "table" then
        local list = {}
        for i, x in ipairs(value) do list[i] = form_value(x) end
        value = list
      else value = form_value(value) end
    end
    if type(key) ~= "string" then out[key] = value
    else
      local path = {}
      for part in key:gsub("%[%]$", ""):gsub("%[(%d+)%]", ".%1"):gmatch("[^.]+") do path[#path + 1] = tonumber(part) or part end
      local t = out
      for i = 1, #path - 1 do
        if type(t[path[i]]) ~= "table" then t[path[i]] = {} end
        t = t[path[i]]
      end
      if #path > 0 then t[path[#path]] = value end
    end
  end
  return out
end

local YIELDED = {}
local helpers = {
  -- lapis's yield_error: the route's on_error answers with the error
  yield_error = function(err) error({ [YIELDED] = true, err = err }, 0) end,
}

local function unexpected(err)
  kong.log.err(err)
  return kong.response.exit(500, { message = "An unexpected error occurred" })
end

-- the status of a DAO's error, as Kong's Admin API answers each code
local BY_CODE = { [1] = 400, [2] = 400, [3] = 409, [4] = 400, [5] = 409, [6] = 404, [7] = 400, [12] = 405, [13] = 400 }
local function on_error(self)
  local err = self.errors[1]
  if type(err) ~= "table" then return unexpected(err) end
  if err.name then
    err.strategy = nil
    local status = BY_CODE[err.code]
    if not status then return unexpected(err) end
    if status == 405 then kong.log.err(err) end
    return kong.response.exit(status, err)
  end
  if err.db then return unexpected(err.message) end
  if err.unique then return kong.response.exit(409, err.tbl) end
  if err.foreign then return kong.response.exit(404, err.tbl or { message = "Not found" }) end
  return kong.response.exit(400, err.tbl or err.message)
end

-- the route running now (admin-route.ts calls __spec_admin_route while the spec waits on the host)
local pending

local function run(self, methods, fn, db, parent)
  local ctype = (self.req.headers["content-type"] or ""):lower()
  if NEEDS_BODY[self.req.method] and ctype ~= "" and not (ctype:find("^application/json") or ctype:find("^multipart/form%-data")
      or ctype:find("^application/x%-www%-form%-urlencoded")) then
    return kong.response.exit(415)
  end
  if self.bad_json then return kong.response.exit(400, { message = "Cannot parse JSON body" }) end
  local ok, res, err = xpcall(function()
    -- a route's `before` runs first; its kong.response.exit ends the request there
    if type(methods.before) == "function" then methods.before(self, db, helpers) end
    return fn(self, db, helpers, parent)
  end, function(e)
    if type(e) == "table" and e[YIELDED] then return e end
    return debug.traceback(tostring(e), 2)
  end)
  if not ok then
    if type(res) == "table" and res[YIELDED] then
      self.errors = { res.err }
      return (methods.on_error or on_error)(self)
    end
    ngx.log(ngx.ERR, res)
    return kong.response.exit(500, { message = "An unexpected error occurred" })
  end
  if err then return unexpected(err) end
  -- what it printed is the answer (ngx.print sent the headers); nothing at all is an empty 200
  if res == nil then
    if ngx.headers_sent then return end
    return kong.response.exit(200)
  end
  -- lapis's render options, which older api.lua files return
  if type(res) == "table" then
    if res.json ~= nil then return kong.response.exit(res.status or 200, res.json) end
    return kong.response.exit(res.status or 200, res[1])
  end
  return kong.response.exit(200, tostring(res), { ["Content-Type"] = "text/html" })
end

function __spec_admin_route(token)
  return require("broker.request").run(token, pending)
end

local function allowed(methods)
  local list = {}
  for _, m in ipairs(HTTP_METHODS) do
    if type(methods[m]) == "function" or m == "OPTIONS" or (m == "HEAD" and type(methods.GET) == "function") then
      list[#list + 1] = m
    end
  end
  return table.concat(list, ", ")
end

local header_mt = { __index = function(t, k)
  if type(k) ~= "string" then return nil end
  for name, v in next, t do if name:lower() == k:lower() then return v end end
end }

-- the generated endpoint a route customizes, called as `parent()`: the request again with the URL's params and
-- the body as the handler left them (acl's `before` turns a group name into its id)
local function parent_of(self, route, req, generic)
  return function()
    local path = route.pattern:gsub(":([%w_]+)", function(name) return tostring(self.params[name]) end)
    local sent = { method = self.req.method, path = path, query = self.req.parsed_url.query, headers = req.headers }
    if NEEDS_BODY[self.req.method] then
      sent.headers = { ["Content-Type"] = "application/json" }
      sent.body = cjson.encode(self.args and self.args.post or {})
    end
    local answer = generic(sent)
    if answer.raise then error(answer.raise, 0) end
    local body = answer.body
    if body == "" then body = nil end
    return kong.response.exit(answer.status, body, answer.headers)
  end
end

--- The answer of the plugin route `req` reaches, or nil when none does; `generated(pattern)` says whether a
--- DAO's generated endpoint has that pattern, `generic(req)` answers as that endpoint.
function M.answer(req, generated, generic)
  local list, load_err = routes(generated)
  local path = req.path:gsub("[?#].*$", "")
  local parts = split(path)
  local route, url_params
  for _, r in ipairs(list) do
    url_params = fit(r, parts)
    if url_params then route = r break end
  end
  if not route then
    -- an api.lua broker could not load (a module it does not emulate) matters where its routes might have answered
    if not load_err then return nil end
    local answer = generic(req)
    if answer.status ~= 404 then return answer end
    return { raise = "spec.helpers.admin_client(): " .. load_err }
  end
  local method, methods = req.method, route.methods
  local fn = methods[method]
  if fn == nil and method == "HEAD" then fn = methods.GET end
  -- a DAO's generated endpoint the module customizes: a method it does not define is the generated one's,
  -- after the route's `before`
  if route.override and type(fn) ~= "function" then
    if type(methods.before) ~= "function" then return nil end
    fn = function(self, _, _, parent) return parent() end
  end
  if type(fn) ~= "function" then
    if method == "OPTIONS" then
      local allow = allowed(methods)
      return { status = 204, body = "", headers = { Allow = allow, ["Access-Control-Allow-Methods"] = allow,
        ["Access-Control-Allow-Headers"] = "Content-Type" } }
    end
    return { status = 405, headers = JSON, body = cjson.encode({ message = "Method not allowed" }) }
  end
  local headers = setmetatable({}, header_mt)
  for k, v in pairs(req.headers or {}) do headers[k] = v end
  local query = type(req.query) == "string" and req.query or (req.path:match("%?(.*)$") or "")
  local query_args = ngx.decode_args(query, 0)
  local ctype = tostring(headers["content-type"] or ""):lower()
  local body = req.body or ""
  local json, post, bad_json
  if NEEDS_BODY[method] and ctype:find("application/json", 1, true) then
    json = body ~= "" and cjson.decode(body) or nil
    bad_json = type(json) ~= "table"
  elseif NEEDS_BODY[method] and ctype:find("www-form-urlencoded", 1, true) then
    post = ngx.decode_args(body, 0)
  end
  local params = {}
  for k, v in pairs(query_args) do params[k] = v end
  for k, v in pairs(post or {}) do params[k] = v end
  for k, v in pairs(url_params) do params[k] = v end
  if type(json) == "table" then
    for k, v in pairs(json) do params[k] = v end
  else
    params = normalize(params, post ~= nil)
  end
  local self = { params = params, json = type(json) == "table" and json or nil, bad_json = bad_json,
    route_name = route.pattern, errors = nil, res = { headers = {} },
    req = { method = method, headers = headers, parsed_url = { path = path, query = query },
      params_get = query_args, params_post = post or {} } }
  local db = {}
  if route.new_db then
    db = kong.db
    self.args = { uri = query_args, post = type(json) == "table" and json or normalize(post or {}, true) }
  end
  local parent = route.override and parent_of(self, route, req, generic) or nil
  pending = function() return run(self, methods, fn, db, parent) end
  local answer = client.host("admin_route", { method = method, path = path, query = query, headers = req.headers or {},
    body = req.body, db = require("broker.spec.dao").snapshot(), generation = client.generation })
  pending = nil
  return answer
end

return M
