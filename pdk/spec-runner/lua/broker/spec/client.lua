-- The HTTP clients of spec.helpers (written for broker): proxy_client, admin_client and
-- http_client send nothing over a socket; each request goes to the host, which runs it through
-- Kong in process (router, plugins, mock upstream) and answers as resty.http would.
local cjson = require "cjson"
-- generation: bumped when start_kong loads the plugins afresh (Kong in process forgets the instances it made)
local M = { generation = 0 }

-- an error at the spec's line (the first frame outside broker's Lua), however deep the client call was
local function raise(message)
  for level = 2, 40 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if info.what ~= "C" and not info.source:find("^@broker:") then
      error(info.short_src .. ":" .. info.currentline .. ": " .. message, 0)
    end
  end
  error(message, 0)
end
M.raise = raise

local function host(op, payload) return coroutine.yield("host", op, payload) end
M.host = host

local function lookup(headers, name)
  name = name:lower()
  for k, v in pairs(headers or {}) do
    if type(k) == "string" and k:lower() == name then return v, k end
  end
end
M.lookup = lookup

-- headers answered by the host, read in any case (as resty.http's are)
local headers_mt = { __index = function(t, k)
  if type(k) ~= "string" then return nil end
  local lower = k:lower()
  for name, v in next, t do if name:lower() == lower then return v end end
end }

-- keys in Kong's order: numbers first, then the rest, each kind sorted
local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) == type(b) then return a < b end
    return type(a) == "number"
  end)
  return keys
end

-- A table as the form body Kong's client sends (kong.tools.http's encode_args, raw): values as the spec
-- gives them, not escaped again (a spec may give them escaped already), nested tables as `a.b=` and `a[1]=`
-- (`a[]=` when the request says no_array_indexes), null as `a=`, an empty string as the bare key.
local function form_body(body, no_array_indexes)
  local out = {}
  local function nested(prefix, t)
    for _, k in ipairs(sorted_keys(t)) do
      local name = type(k) == "number" and (no_array_indexes and prefix .. "[]" or prefix .. "[" .. k .. "]")
        or prefix .. "." .. tostring(k)
      if type(t[k]) == "table" then nested(name, t[k]) else out[#out + 1] = name .. "=" .. tostring(t[k]) end
    end
  end
  for _, k in ipairs(sorted_keys(body)) do
    local v = body[k]
    if type(v) == "table" then nested(tostring(k), v)
    elseif v == ngx.null then out[#out + 1] = tostring(k) .. "="
    else
      v = tostring(v)
      out[#out + 1] = v == "" and tostring(k) or tostring(k) .. "=" .. v
    end
  end
  return table.concat(out, "&")
end

local function encode_body(body, headers, no_array_indexes)
  if type(body) == "number" then return tostring(body) end
  if type(body) ~= "table" then return body end
  local ctype = lookup(headers, "content-type") or ""
  if ctype:find("www-form-urlencoded", 1, true) then return form_body(body, no_array_indexes) end
  if ctype:find("multipart/form-data", 1, true) then
    -- each field a part, as Kong's client writes them; the boundary goes into the Content-Type
    local boundary = ctype:match("boundary=([^;%s]+)")
    if not boundary then
      boundary = "broker-spec-boundary"
      local _, name = lookup(headers, "content-type")
      headers[name] = ctype .. "; boundary=" .. boundary
    end
    local keys, parts = {}, {}
    for k in pairs(body) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    for _, k in ipairs(keys) do
      parts[#parts + 1] = "--" .. boundary .. "\r\nContent-Disposition: form-data; name=\"" .. k .. "\"\r\n\r\n"
        .. tostring(body[k]) .. "\r\n"
    end
    return table.concat(parts) .. "--" .. boundary .. "--\r\n"
  end
  if ctype:find("application/json", 1, true) then return cjson.encode(body) end
  -- another type, or none: Kong's client hands the table to resty.http, which sends its array part joined
  local ok, joined = pcall(table.concat, body)
  return ok and joined or ""
end

-- what Kong names itself in Server and Via: the checkout's kong.meta when the spec runs in one
local function server_tokens()
  local ok, meta = pcall(require, "kong.meta")
  return ok and type(meta) == "table" and meta._SERVER_TOKENS or "kong/3.9.1"
end

local function mock_ports()
  local ports = setmetatable({}, __broker_array_mt)
  for port in pairs(require("broker.spec.mocks").started) do ports[#ports + 1] = port end
  return ports
end

-- what follows every answer: the request's log lines go to the error.log, the timers it queued run; a host
-- error fails the spec's line
local function after(answer)
  require("broker.spec.logfile").append(answer.log)
  require("broker.spec.timers").run()
  if answer.raise then raise(answer.raise) end
end

-- a request to Kong in process (or the mock upstream), with the database as it stands
local function through(kind, request)
  request.server, request.generation = server_tokens(), M.generation
  request.db, request.mocks, request.conf = require("broker.spec.dao").snapshot(), mock_ports(), M.kong_conf
  if M.recording and kind == "proxy" then request.state = require("broker.spec.record").state() end
  local mark = __spec_log_count and __spec_log_count()
  local answer = host(kind, request)
  -- what Kong logged reading a plugin's config for it (a vault reference that did not resolve) comes first
  if mark then require("broker.spec.logfile").append(__spec_log_lines(mark)) end
  after(answer)
  return answer
end

local Client = {}
Client.__index = Client

--- client:send{ method, path, query, headers, body }: the response, or nil and an error.
function Client:send(opts)
  opts = opts or {}
  if self.closed then return nil, "closed" end
  local headers = {}
  for k, v in pairs(opts.headers or {}) do headers[k] = v end
  local body = encode_body(opts.body, headers, opts.no_array_indexes)
  local query = opts.query
  if type(query) == "table" then query = ngx.encode_args(query) end
  local path = opts.path or "/"
  -- the client is one connection: nginx numbers it, and counts the requests made on it
  self.requests = self.requests + 1
  local request = { method = (opts.method or "GET"):upper(), path = path, query = query, headers = headers, body = body,
    version = tonumber(opts.version), connection = { serial = self.serial, requests = self.requests } }
  local answer
  if self.kind == "status" then
    -- a data plane's status API: ready once it has a configuration (at once: its control plane's, in process)
    local p = path:gsub("%?.*$", "")
    if p == "/status/ready" or p == "/status/ready/" then
      answer = { status = 200, headers = { ["Content-Type"] = "application/json; charset=utf-8" },
        body = '{"message":"ready"}' }
    else
      request.path = p
      answer = require("broker.spec.admin").handle(request)
    end
  elseif self.kind == "admin" then
    -- the Admin API is Lua beside the database it changes
    answer = require("broker.spec.admin").handle(request)
    after(answer)
  elseif self.kind == "mock" then
    -- an http_mock answers in the spec's VM (its routes are the spec's Lua)
    local q = request.query or path:match("%?(.*)$") or ""
    request.path, request.query = path:gsub("%?.*$", ""), q
    answer = require("broker.spec.mocks").answer(self.port, request)
    if not answer then raise("no http_mock is started on port " .. tostring(self.port)) end
  else
    request.host, request.port = self.host, self.port
    -- resty.http sends the address it connected to as the Host a request does not give
    if self.kind == "proxy" and not lookup(headers, "host") then headers.Host = self.host .. ":" .. self.port end
    answer = through(self.kind, request)
  end
  local res = { status = answer.status, reason = answer.reason, headers = setmetatable(answer.headers or {}, headers_mt),
    has_body = answer.body ~= nil and answer.body ~= "" }
  local body_text = answer.body or ""
  function res.read_body() return body_text end
  res.body = nil
  return res
end

for _, m in ipairs({ "get", "post", "put", "patch", "delete", "options", "head" }) do
  Client[m] = function(self, path, opts)
    local o = {}
    for k, v in pairs(opts or {}) do o[k] = v end
    o.method, o.path = m:upper(), path
    return self:send(o)
  end
end
-- resty.http's own request{...}, which Kong's client passes through: the same as send here
Client.request = Client.send
function Client:close() self.closed = true return true end
function Client:set_timeout() end
function Client:set_timeouts() end

-- Kong's grpcurl helper joins each option and its value with a space (a bare flag's value is true)
local function grpcurl_opts(opts)
  local parts = {}
  for opt, val in pairs(opts) do
    if val ~= false then parts[#parts + 1] = opt .. " " .. (type(val) == "string" and val or "") end
  end
  return table.concat(parts, " ")
end

--- proxy_client_grpc's client: called with { service, body, opts }, it returns true and grpcurl's
--- output, or nil and the output with grpcurl's error (the host runs grpcurl's call, grpc/index.ts).
--- `down()` says whether nothing listens there (Kong not started): grpcurl cannot dial it.
function M.grpc(host_name, port, defaults, down)
  return setmetatable({ opts = defaults }, { __call = function(t, args)
    local service = assert(args.service)
    local target = host_name .. ":" .. tostring(port)
    if down and down() then
      return nil, ('Failed to dial target host "%s": dial tcp %s: connect: connection refused\n'):format(target, target)
    end
    local opts = {}
    for k, v in pairs(t.opts) do opts[k] = v end
    for k, v in pairs(args.opts or {}) do opts[k] = v end
    local body = args.body
    if body ~= nil then
      if type(body) == "table" then body = cjson.encode(body) end
      opts["-d"] = "'" .. tostring(body) .. "'"
    end
    local answer = through("grpc", { target = target, service = service, args = grpcurl_opts(opts) })
    if answer.ok then return true, answer.output end
    return nil, answer.output
  end })
end

local connections = 0
function M.new(kind, host_name, port)
  connections = connections + 1
  return setmetatable({ kind = kind, host = host_name, port = port, serial = connections, requests = 0 }, Client)
end

return M
