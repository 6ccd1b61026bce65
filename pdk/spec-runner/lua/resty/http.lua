-- resty.http for `broker pdk test` (lua-resty-http's interface, written for broker): a plugin's request to
-- a server answered in process (broker.spec.mocks: Kong's mock upstream, where http-log's specs point it at
-- helpers.mock_upstream_url .. "/post_log/<name>", on its plain or TLS port; the Zipkin collector of
-- helpers.zipkin_host) is answered by the host, as http_client's requests are; one to a started http_mock (a name
-- the started Kong's dns_mock resolves included) is answered by its routes in this VM, from a phase too.
-- The host answers the mock upstream and the collector at once, from a timer or inside a phase. Any other server
-- answers nil and an error naming it, so the plugin's own error handling runs and the spec's assertion fails.
local spec_client = require "broker.spec.client"
local db = require "broker.spec.db"
local mocks = require "broker.spec.mocks"

local M = { _VERSION = "0.17.2" }
M._USER_AGENT = "lua-resty-http/" .. M._VERSION .. " (Lua) ngx_lua/10026"

-- a client's methods are the module's, as lua-resty-http's are: a spec that replaces http.request_uri (azure-functions'
-- pre-function) changes every client's
local Http = M
local mt = { __index = M }

-- response headers, read and written in any case: a field written in another case than the answer's (a plugin's
-- res.headers["content-type"] = …, or = nil) changes that field, as lua-resty-http's header table does
local function field(t, k)
  local lower = k:lower()
  for name in next, t do if type(name) == "string" and name:lower() == lower then return name end end
end
local headers_mt = {
  __index = function(t, k)
    if type(k) ~= "string" then return nil end
    local name = field(t, k)
    return name and rawget(t, name)
  end,
  __newindex = function(t, k, v)
    rawset(t, type(k) == "string" and field(t, k) or k, v)
  end,
}

function M.new() return setmetatable({}, mt) end
-- the longest a request waits for its answer, ms (lua-resty-http's: one for all, or connect, send and read)
function Http:set_timeout(ms) self.connect_timeout, self.read_timeout = tonumber(ms), tonumber(ms) end
function Http:set_timeouts(connect, _, read) self.connect_timeout, self.read_timeout = tonumber(connect), tonumber(read) end
function Http:set_proxy_options() end
function Http:set_keepalive() return 1 end
function Http:close() return 1 end

-- scheme, host, port, path and query of an absolute URI, or nil
local function parse(uri)
  if type(uri) ~= "string" then return nil end
  local scheme, rest = uri:match("^(https?)://(.*)$")
  if not scheme then return nil end
  local authority, tail = rest:match("^([^/?#]*)(.*)$")
  local userinfo, hostport = authority:match("^(.*)@(.*)$")
  hostport = hostport or authority
  local host, port = hostport:match("^([^:]+):?(%d*)$")
  if not host then return nil end
  local path, query = tail:gsub("#.*$", ""):match("^([^?]*)%??(.*)$")
  return scheme, host, tonumber(port) or (scheme == "https" and 443 or 80), path ~= "" and path or "/", query, userinfo
end

--- httpc:parse_uri(uri): { scheme, host, port, path, query }, or nil and an error.
function Http:parse_uri(uri)
  local scheme, host, port, path, query = parse(uri)
  if not scheme then return nil, "bad uri: " .. tostring(uri) end
  return { scheme, host, port, path, query }
end

--- httpc:request_uri(uri, params): the response ({ status, headers, body }) or nil and an error.
function Http:request_uri(uri, params)
  params = params or {}
  local scheme, host, port, path, query = parse(uri)
  if not scheme then return nil, "bad uri: " .. tostring(uri) end
  -- a started Kong's own listener (Kong's test proxy ports, its proxy_listen, a data plane's status API): it answers
  -- in process, as to spec.helpers' clients
  local helpers = package.loaded["spec.helpers"]
  local own = helpers and mocks.is_local(host) and helpers.__listener_client(host, port)
  -- else Kong in process sends it: the started Kong's dns_mock resolves the name
  local server = own and "kong" or mocks.server(host, port, true)
  if not server and mocks.is_local(host) then
    -- nothing in process answers there: a connection finds what listens on this machine (nothing: "connection
    -- refused", as lua-resty-http reports it); a server that does listen is not spoken to
    local address = mocks.resolve(host, true)
    local sock = ngx.socket.tcp()
    sock:settimeouts(self.connect_timeout, self.connect_timeout, self.connect_timeout)
    local ok, err = sock:connect(address == "localhost" and "127.0.0.1" or address, port)
    if not ok then return nil, err end
    sock:close()
  end
  if not server then
    return nil, "broker: resty.http to " .. host .. ":" .. port .. " is not emulated in pdk test (Kong's mock upstream, "
      .. db.MOCK_HOST .. ":" .. db.MOCK_PORT .. " and :" .. mocks.MOCK_SSL_PORT .. ", the Zipkin collector, "
      .. mocks.zipkin_host .. ":" .. mocks.zipkin_port .. ", and a started http_mock answer in process)"
  end
  if type(params.query) == "table" then query = ngx.encode_args(params.query)
  elseif type(params.query) == "string" and params.query ~= "" then query = params.query end
  local headers = {}
  for k, v in pairs(params.headers or {}) do headers[k] = type(v) == "number" and tostring(v) or v end
  if not spec_client.lookup(headers, "host") then headers.Host = host .. ":" .. port end
  if not spec_client.lookup(headers, "user-agent") then headers["User-Agent"] = M._USER_AGENT end
  local body = params.body
  -- a body may be an iterator of chunks (http-log's JSON array of a batch), read to its end
  if type(body) == "function" then
    local chunks = {}
    for chunk in body do chunks[#chunks + 1] = chunk end
    body = table.concat(chunks)
  end
  if body ~= nil and not spec_client.lookup(headers, "content-length") then headers["Content-Length"] = tostring(#body) end
  path = params.path or path
  if own then
    local res, err = own:send({ method = params.method or "GET", path = path, query = query, headers = headers,
      body = body })
    if not res then return nil, err end
    local answer = res.read_body()
    return { status = res.status, reason = res.reason or "", headers = res.headers, body = answer,
      has_body = answer ~= "" }
  end
  if server == "mock" then
    -- an http_mock's routes run in this VM, from a timer or inside a phase alike
    local answer = mocks.answer(port, { method = params.method or "GET", path = path, query = query,
      headers = headers, body = body })
    return { status = answer.status, reason = "", headers = setmetatable(answer.headers, headers_mt),
      body = answer.body, has_body = answer.body ~= "" }
  end
  -- the mock upstream's /delay/<s> answers after that many seconds: past the client's timeout it is the
  -- socket's "timeout", as a plugin's error handling sees it from lua-resty-http
  local delay = tonumber(path:match("^/delay/(%d+)$"))
  if delay and self.read_timeout and delay * 1000 > self.read_timeout then return nil, "timeout" end
  -- the host answers at once, from a timer or inside a phase alike
  local answer = __spec_server_answer(server, { method = params.method or "GET", path = path, query = query,
    headers = headers, body = body or "" })
  if answer.raise then return nil, answer.raise end
  return { status = answer.status, reason = "", headers = setmetatable(answer.headers or {}, headers_mt),
    body = answer.body, has_body = answer.body ~= nil and answer.body ~= "" }
end

--- httpc:connect{ scheme, host, port } then httpc:request{ method, path, query, headers, body }: lua-resty-http's
--- two steps, answered as request_uri answers; the response's body is read with res:read_body() or res.body_reader.
function Http:connect(opts, host, port)
  if type(opts) ~= "table" then opts = { host = opts, port = host } end
  if type(opts.host) ~= "string" or opts.host:sub(1, 5) == "unix:" then
    return nil, "broker: resty.http connect to " .. tostring(opts.host) .. " is not emulated in pdk test"
  end
  self.target = { scheme = opts.scheme or "http", host = opts.host,
    port = tonumber(opts.port) or (opts.scheme == "https" and 443 or 80) }
  return true
end

function Http:request(params)
  params = params or {}
  local t = self.target
  if not t then return nil, "closed" end
  local res, err = self:request_uri(t.scheme .. "://" .. t.host .. ":" .. t.port .. (params.path or "/"), params)
  if not res then return nil, err end
  local body = res.body
  res.read_body = function() local b = body body = nil return b or "" end
  res.body_reader = function() local b = body body = nil return b end
  return res
end

return M
