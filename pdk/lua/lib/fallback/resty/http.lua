-- resty.http (lua-resty-http), written for broker. A replay opens no connection: when the fixture has
-- an `outbound` list, each request is answered by its first matching entry (the host matches it and
-- records it for the trace and expect.outbound); without the list, making a client fails the fixture,
-- naming resty.http. A plugin that only requires it to send from a timer runs either way (Kong's
-- http-log; timers never fire in a replay). It is a fallback: a resty.http of your own (a stub) on a
-- Lua root or in the system folders wins.
local unsupported = require "broker.unsupported"
local H = __host

local M = { _VERSION = "0.17.2" }
M._USER_AGENT = "lua-resty-http/" .. M._VERSION .. " (Lua) ngx_lua/10026"

local DEFAULT_PORT = { http = 80, https = 443 }

-- Response headers read in any case, as lua-resty-http's: a name keeps the case it was first set with.
local function headers_table()
  local names = {}
  return setmetatable({}, {
    __index = function(t, k)
      local name = type(k) == "string" and names[k:lower()]
      return name and rawget(t, name) or nil
    end,
    __newindex = function(t, k, v)
      local key = type(k) == "string" and k:lower() or k
      local name = names[key]
      if not name then
        names[key] = k
        name = k
      end
      rawset(t, name, v)
    end,
  })
end

local client = {}
client.__index = client

function M.new()
  if not H("http_enabled") then return unsupported("resty.http", "resty.http.new") end
  return setmetatable({ timeouts = {} }, client)
end

function client:set_timeout(ms)
  self.timeouts = { ms, ms, ms }
end

function client:set_timeouts(connect, send, read)
  self.timeouts = { connect, send, read }
end

function client:set_proxy_options(opts)
  self.proxy_opts = opts
end

-- scheme, host, port, path, query of `uri` ("//host/…" takes http), or nil, "bad uri: …"
function client:parse_uri(uri, query_in_path)
  if query_in_path == nil then query_in_path = true end
  if type(uri) ~= "string" then return nil, "bad uri: " .. tostring(uri) end
  local scheme, rest = uri:match("^(https?)://(.*)$")
  if not scheme then
    rest = uri:match("^//(.*)$")
    scheme = "http"
  end
  if not rest then return nil, "bad uri: " .. uri end
  local authority, tail = rest:match("^([^/?#]*)(.*)$")
  authority = authority:gsub("^.*@", "")
  local host, port = authority:match("^(%[.+%]):?(%d*)$")
  if not host then host, port = authority:match("^([^:]+):?(%d*)$") end
  if not host or host == "" then return nil, "bad uri: " .. uri end
  tail = tail:gsub("#.*$", "")
  local path, query = tail:match("^([^?]*)%??(.*)$")
  if path == "" then path = "/" end
  port = tonumber(port) or DEFAULT_PORT[scheme]
  if query_in_path and query ~= "" then
    path = path .. "?" .. query
    query = ""
  end
  return { scheme, host, port, path, query }
end

-- connect(options) or the older connect(host, port, options): nothing is opened, the target is kept.
function client:connect(options, port, more)
  if type(options) ~= "table" then
    local host = options
    options = more or {}
    options.host, options.port = host, port
    options.scheme = options.scheme or "http"
  end
  if type(options.host) ~= "string" or options.host == "" then return nil, "no host given" end
  local scheme = options.scheme or "http"
  self.target = {
    scheme = scheme,
    host = options.host,
    port = tonumber(options.port) or DEFAULT_PORT[scheme] or 80,
  }
  return true
end

function client:ssl_handshake()
  if not self.target then return nil, "not connected" end
  self.target.scheme = "https"
  return true
end

function client:set_keepalive()
  self.target = nil
  return 1
end

function client:close()
  self.target = nil
  return 1
end

function client:get_reused_times()
  return 0
end

local function query_text(query)
  if type(query) == "table" then return ngx.encode_args(query) end
  if query == nil then return "" end
  return (tostring(query):gsub("^%?", ""))
end

local function body_text(body)
  if type(body) == "table" then return table.concat(body) end
  if type(body) == "function" then
    local parts = {}
    for chunk in body do parts[#parts + 1] = chunk end
    return table.concat(parts)
  end
  if body == nil then return nil end
  return tostring(body)
end

local function url_of(target, path, query)
  local host = target.host
  if target.port ~= DEFAULT_PORT[target.scheme] then host = host .. ":" .. target.port end
  local q = query_text(query)
  return target.scheme .. "://" .. host .. path .. (q ~= "" and "?" .. q or "")
end

-- The headers sent: the plugin's, with Host, User-Agent and Content-Length added as the library does.
local function headers_sent(target, headers, body)
  local out, seen = {}, {}
  for k, v in pairs(headers or {}) do
    if type(v) == "table" then
      local list = {}
      for i, x in ipairs(v) do list[i] = tostring(x) end
      out[k] = list
    else
      out[k] = tostring(v)
    end
    seen[tostring(k):lower()] = true
  end
  if not seen["host"] then
    local host = target.host
    if target.port ~= DEFAULT_PORT[target.scheme] then host = host .. ":" .. target.port end
    out["Host"] = host
  end
  if not seen["user-agent"] then out["User-Agent"] = M._USER_AGENT end
  if body and not seen["content-length"] and not seen["transfer-encoding"] then
    out["Content-Length"] = tostring(#body)
  end
  return out
end

local function send(self, call, params)
  local target = self.target
  if not target then return nil, "not connected" end
  local method = params.method or "GET"
  local body = body_text(params.body)
  local url = url_of(target, params.path or "/", params.query)
  local status, reason, headers, res_body = H("http_send", call, method, url, headers_sent(target, params.headers, body), body)
  if status == false then error(reason, 3) end
  if status == nil then return nil, reason end
  local res_headers = headers_table()
  for k, v in pairs(headers) do res_headers[k] = v end
  local has_body = method ~= "HEAD" and status ~= 204 and status ~= 304 and status >= 200
  local pending = has_body and res_body or nil
  local res = { status = status, reason = reason, headers = res_headers, has_body = has_body }
  res.body_reader = function()
    local chunk = pending
    pending = nil
    return chunk
  end
  res.read_body = function()
    local chunk = pending or ""
    pending = nil
    return chunk
  end
  res.read_trailers = function() end
  return res
end

function client:request(params)
  return send(self, "request", params or {})
end

function client:request_uri(uri, params)
  params = params or {}
  local parsed, err = self:parse_uri(uri, false)
  if not parsed then return nil, err end
  local scheme, host, port, path, query = parsed[1], parsed[2], parsed[3], parsed[4], parsed[5]
  local p = {}
  for k, v in pairs(params) do p[k] = v end
  p.path = p.path or path
  if p.query == nil then p.query = query end
  local ok
  ok, err = self:connect({ scheme = scheme, host = host, port = port })
  if not ok then return nil, err end
  local res
  res, err = send(self, "request_uri", p)
  if not res then
    self:close()
    return nil, err
  end
  res.body = res:read_body()
  if p.keepalive == false then self:close() else self:set_keepalive() end
  return res
end

return M
