-- One request answered by an http_mock's routes, in the spec's VM (written for broker from the documented shape of
-- Kong's spec.helpers.http_mock): the location the request's path selects (nginx's rules: `= /x` exact, then the
-- longest prefix, `^~` stopping there, then `~`/`~*` regexes, then the longest prefix) runs its `access` Lua, then
-- its `content` Lua, then its `log` Lua, each with an `ngx` of the mock's own request (ngx.req, ngx.var,
-- ngx.header, ngx.status, ngx.say/print, ngx.exit, ngx.ctx; a regex location's captures in ngx.var); everything else
-- of ngx is the spec's. The directives `return <code> [text]` and `default_type` act as nginx's do; any other
-- directive, and the header_filter and body_filter phases, raise naming themselves.
local M = {}

local real_ngx = ngx
local EXIT = {}

local STATUS_TEXT = { [400] = "Bad Request", [401] = "Unauthorized", [403] = "Forbidden", [404] = "Not Found",
  [405] = "Not Allowed", [500] = "Internal Server Error", [502] = "Bad Gateway", [503] = "Service Unavailable" }

-- nginx's own page for a status nothing was printed for
local function error_page(status)
  local title = status .. " " .. (STATUS_TEXT[status] or "")
  return "<html>\r\n<head><title>" .. title .. "</title></head>\r\n<body>\r\n<center><h1>" .. title
    .. "</h1></center>\r\n<hr><center>openresty</center>\r\n</body>\r\n</html>\r\n"
end

local function lookup(t, name)
  name = name:lower()
  for k, v in pairs(t) do if type(k) == "string" and k:lower() == name then return v, k end end
end

-- what ngx.print writes of its arguments: strings, numbers, booleans, nil and nested arrays of them
local function flatten(out, v)
  if type(v) == "table" then for _, x in ipairs(v) do flatten(out, x) end
  elseif v == nil then out[#out + 1] = "nil"
  elseif v == real_ngx.null then out[#out + 1] = "null"
  else out[#out + 1] = tostring(v) end
end

-- the request being answered (nil outside one): its `req`, the response so far and its ngx.ctx
local cur

local function need(what)
  if not cur then error(what .. " called outside an http_mock request", 3) end
  return cur
end

local REQ = {}
function REQ.get_method() return need("ngx.req.get_method").req.method end
function REQ.get_uri_args() return real_ngx.decode_args(need("ngx.req.get_uri_args").req.query or "", 0) end
function REQ.get_headers(_, raw)
  local out = {}
  for k, v in pairs(need("ngx.req.get_headers").req.headers) do out[raw and k or k:lower()] = v end
  if raw then return out end
  return setmetatable(out, { __index = function(t, k)
    if type(k) == "string" then return rawget(t, k:lower():gsub("_", "-")) end
  end })
end
function REQ.read_body() need("ngx.req.read_body") end
function REQ.discard_body() need("ngx.req.discard_body") end
function REQ.get_body_data()
  local body = need("ngx.req.get_body_data").req.body
  if body == nil or body == "" then return nil end
  return body
end
function REQ.get_body_file() need("ngx.req.get_body_file") return nil end
function REQ.get_post_args() return real_ngx.decode_args(need("ngx.req.get_post_args").req.body or "", 0) end
function REQ.start_time() return need("ngx.req.start_time").start end
function REQ.http_version() need("ngx.req.http_version") return 1.1 end
function REQ.set_header(name, value)
  local headers = need("ngx.req.set_header").req.headers
  local _, had = lookup(headers, name)
  if had then headers[had] = nil end
  headers[name] = value
end
function REQ.clear_header(name)
  local headers = need("ngx.req.clear_header").req.headers
  local _, had = lookup(headers, name)
  if had then headers[had] = nil end
end
-- outside a mock's request (a module it loaded, called later) ngx.req is the spec's
local req = setmetatable({}, { __index = function(_, k)
  if not cur then return real_ngx.req[k] end
  local f = REQ[k]
  if f == nil then error("ngx.req." .. tostring(k) .. " is not emulated in an http_mock's Lua by broker", 2) end
  return f
end })

local var = setmetatable({}, {
  __index = function(_, k)
    if not cur then return real_ngx.var[k] end
    if cur.captures[k] ~= nil then return cur.captures[k] end
    local r = cur.req
    local query = r.query or ""
    if k == "request_uri" then return r.path .. (query ~= "" and "?" .. query or "") end
    if k == "uri" then return real_ngx.unescape_uri(r.path) end
    if k == "args" or k == "query_string" then return query ~= "" and query or nil end
    if k == "is_args" then return query ~= "" and "?" or "" end
    if k == "request_method" then return r.method end
    if k == "scheme" then return "http" end
    if k == "server_port" then return tostring(cur.port) end
    if k == "remote_addr" or k == "server_addr" then return "127.0.0.1" end
    if k == "host" then return ((lookup(r.headers, "host")) or "localhost"):gsub(":%d+$", "") end
    if k == "request_body" then return r.body end
    local header = type(k) == "string" and k:match("^http_(.+)$")
    if header then
      local v = lookup(r.headers, header:gsub("_", "-"))
      if type(v) == "table" then v = table.concat(v, ", ") end
      return v
    end
    return nil
  end,
  __newindex = function(_, k, v)
    if cur then error("ngx.var." .. tostring(k) .. " cannot be written in an http_mock's Lua (broker)", 2) end
    real_ngx.var[k] = v
  end,
})

local header = setmetatable({}, {
  __index = function(_, k)
    if not cur then return real_ngx.header[k] end
    return (lookup(cur.headers, tostring(k):gsub("_", "-")))
  end,
  __newindex = function(_, k, v)
    if not cur then real_ngx.header[k] = v return end
    local name = tostring(k):gsub("_", "-")
    local _, had = lookup(cur.headers, name)
    if had then cur.headers[had] = nil end
    if v ~= nil then cur.headers[name] = type(v) == "table" and v or tostring(v) end
  end,
})

local function write(newline, ...)
  local r = need("ngx.print")
  local out = {}
  for i = 1, select("#", ...) do flatten(out, (select(i, ...))) end
  r.body[#r.body + 1] = table.concat(out) .. (newline and "\n" or "")
  r.sent = true
  return 1
end

local OWN = {
  req = req, var = var, header = header,
  say = function(...) return write(true, ...) end,
  print = function(...) return write(false, ...) end,
  flush = function() return true end,
  eof = function() if cur then cur.sent = true end return true end,
  exit = function(code)
    local r = need("ngx.exit")
    code = tonumber(code) or 0
    if code >= 200 and not r.sent then r.status = code end
    -- ngx.OK (0) ends the phase only; a status ends the request
    error(code >= 200 and EXIT or { phase_only = true }, 0)
  end,
}

--- The `ngx` a mock's Lua sees: the request's own parts, the spec's for everything else.
M.ngx = setmetatable({}, {
  __index = function(_, k)
    if k == "status" then return cur and cur.status or real_ngx.status end
    if k == "ctx" then return cur and cur.ctx or real_ngx.ctx end
    local own = OWN[k]
    if own ~= nil and (cur or k == "req" or k == "var" or k == "header") then return own end
    return real_ngx[k]
  end,
  __newindex = function(_, k, v)
    if k == "status" and cur then cur.status = tonumber(v) return end
    if k == "ctx" and cur then cur.ctx = v return end
    real_ngx[k] = v
  end,
})

-- nginx's location selection among the route keys: the key, and a regex location's captures
local function select_route(routes, path)
  local exact, prefix, prefix_len, stop, regexes = nil, nil, -1, false, {}
  local keys = {}
  for k in pairs(routes) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, key in ipairs(keys) do
    -- (nginx takes the modifier with or without a space after it: `~/re/(.+)`)
    local mod, arg = key:match("^%s*([=~^*]+)%s*(.-)%s*$")
    if not mod then mod, arg = "", key:match("^%s*(.-)%s*$") end
    if mod == "=" then
      if arg == path then exact = key end
    elseif mod == "~" or mod == "~*" then
      regexes[#regexes + 1] = { key, arg, mod == "~*" and "joi" or "jo" }
    elseif mod == "" or mod == "^~" then
      if path:sub(1, #arg) == arg and #arg > prefix_len then prefix, prefix_len, stop = key, #arg, mod == "^~" end
    else
      error("http_mock: the location '" .. key .. "' is not emulated by broker (=, ^~, ~, ~* and prefixes are)", 0)
    end
  end
  if exact then return exact end
  if prefix and stop then return prefix end
  for _, r in ipairs(regexes) do
    local m = real_ngx.re.match(path, r[2], r[3])
    if m then return r[1], m end
  end
  return prefix
end

-- `return <code> [text]`: nginx answers with it; `default_type <type>`: the Content-Type of an answer that sets
-- none (the last one given wins, as a location's overrides its server's); anything else is not emulated
local function directives(list, r)
  if list == nil then return false end
  if type(list) == "string" then list = { list } end
  for _, d in ipairs(list) do
    local default_type = d:match("^%s*default_type%s+(.-);?%s*$")
    local code, text = d:match("^%s*return%s+(%d%d%d)%s*(.-);?%s*$")
    if default_type then
      r.default_type = default_type:gsub('^"(.*)"$', "%1"):gsub("^'(.*)'$", "%1")
    elseif not code then
      error("http_mock: the directive '" .. d .. "' is not emulated by broker (`return <code> [text]` and "
        .. "`default_type <type>` are)", 0)
    else
      text = text:gsub('^"(.*)"$', "%1"):gsub("^'(.*)'$", "%1")
      r.status = tonumber(code)
      if text ~= "" then r.body = { text } r.sent = true end
      return true
    end
  end
  return false
end

local compiled = setmetatable({}, { __mode = "k" })
local env = setmetatable({ ngx = M.ngx, print = function(...) real_ngx.log(real_ngx.NOTICE, ...) end },
  { __index = _G, __newindex = _G })

local function chunk(route, phase, code)
  local by = compiled[route] or {}
  compiled[route] = by
  if not by[phase] then
    by[phase] = assert(load(code, "=http_mock " .. phase .. "_by_lua", "t", env))
  end
  return by[phase]
end

-- runs one phase's Lua: false when it ended the request (ngx.exit with a status), else true
local function run(route, phase, code)
  local saved = _G.ngx
  -- a module the mock's Lua loads now (Kong's spec.fixtures.mock_upstream) sees the mock's ngx
  _G.ngx = M.ngx
  local ok, err = pcall(chunk(route, phase, code))
  _G.ngx = saved
  if ok then return true end
  if err == EXIT then return false end
  if type(err) == "table" and err.phase_only then return true end
  error(err, 0)
end

--- Answers `request` ({ method, path, query, headers, body }) with `routes`: { status, headers, body }, and the
--- session Kong's mock logs ({ start_time, end_time, req, resp, err }).
function M.answer(routes, port, request)
  local r = { req = { method = request.method or "GET", path = request.path or "/", query = request.query or "",
    headers = request.headers or {}, body = request.body }, status = 200, headers = {}, body = {}, ctx = {},
    captures = {}, port = port, start = real_ngx.now() }
  local logged = { method = r.req.method, uri = r.req.path .. (r.req.query ~= "" and "?" .. r.req.query or ""),
    query = r.req.query, headers = {}, body = r.req.body }
  for k, v in pairs(r.req.headers) do logged.headers[k] = v end
  local outer, route = cur, nil
  cur = r
  local ok, err = pcall(function()
    local key, captures = select_route(routes, r.req.path)
    -- a regex location's captures are variables, named ($name) and numbered ($1), as nginx sets them
    for k, v in pairs(captures or {}) do if k ~= 0 then r.captures[k] = v end end
    route = key and routes[key]
    if not route then r.status = 404 return end
    for _, phase in ipairs({ "header_filter", "body_filter" }) do
      if route[phase] then
        error("http_mock: the " .. phase .. " phase of a route is not emulated by broker (access, content, log are)", 0)
      end
    end
    if directives(route.directives, r) then return end
    local going = true
    if route.access then going = run(route, "access", route.access) end
    if going and route.content then run(route, "content", route.content)
    elseif going and not r.sent then r.status = 404 end
  end)
  -- a failure is nginx's 500; its error is the session's `err` (Kong's mock writes it to its own error.log)
  if not ok then r.status, r.body, r.sent = 500, {}, false end
  if route and route.log then pcall(run, route, "log", route.log) end
  cur = outer
  local body = table.concat(r.body)
  if not r.sent and r.status >= 300 then
    body = error_page(r.status)
    r.headers["Content-Type"] = r.headers["Content-Type"] or "text/html"
  end
  if r.default_type and not lookup(r.headers, "content-type") then r.headers["Content-Type"] = r.default_type end
  if not lookup(r.headers, "content-length") then r.headers["Content-Length"] = tostring(#body) end
  return { status = r.status, headers = r.headers, body = body },
    { start_time = r.start, end_time = real_ngx.now(), req = logged, resp = {}, err = not ok and tostring(err) or nil }
end

return M
