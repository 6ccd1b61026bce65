-- ngx.socket.tcp and ngx.socket.udp for `broker pdk test` (written for broker, from lua-nginx-module's documentation):
-- real TCP and TLS connections, each call answered synchronously by the host (sockets.ts), so a
-- spec's line, a plugin's phase and a timer call them alike. setkeepalive keeps a connection in a
-- pool by host:port (or opts.pool) and getreusedtimes counts its reuses, as resty.redis expects.
-- A `pdk run` replay still opens no connection (ngx.socket fails the fixture there).
local M = { pool = {}, trusted = nil }
local null = ngx.null

local Sock = {}
Sock.__index = Sock

-- nginx's default lua_socket_connect/send/read timeouts: 60 s
local DEFAULT_TIMEOUT = 60000

local function bytes(data)
  if type(data) == "table" then
    local parts = {}
    for i, v in ipairs(data) do parts[i] = bytes(v) end
    return table.concat(parts)
  end
  if type(data) == "number" then return (math.tointeger(data) and string.format("%d", data)) or tostring(data) end
  if type(data) == "boolean" or data == nil or data == null then return tostring(data) end
  return data
end

function M.tcp()
  return setmetatable({ timeouts = { DEFAULT_TIMEOUT, DEFAULT_TIMEOUT, DEFAULT_TIMEOUT }, reused = 0 }, Sock)
end

function Sock:settimeout(ms)
  ms = tonumber(ms) or DEFAULT_TIMEOUT
  self.timeouts = { ms, ms, ms }
end

function Sock:settimeouts(connect, send, read)
  self.timeouts = { tonumber(connect) or DEFAULT_TIMEOUT, tonumber(send) or DEFAULT_TIMEOUT, tonumber(read) or DEFAULT_TIMEOUT }
end

function Sock:connect(host, port, opts)
  if type(port) == "table" then opts, port = port, nil end
  if self.id then self:close() end
  if type(host) ~= "string" or host:match("^unix:") or not tonumber(port) then
    return nil, "broker: ngx.socket.tcp connects to a host and port (unix sockets are not emulated)"
  end
  local key = (type(opts) == "table" and opts.pool) or (host .. ":" .. tostring(port))
  local list = M.pool[key]
  local pooled = list and table.remove(list)
  -- nginx drops a kept connection the peer closed (or sent to) while it idled; so does the pool here
  while pooled and not __spec_socket("idle", { id = pooled.id }).idle do
    __spec_socket("close", { id = pooled.id })
    pooled = table.remove(list)
  end
  if pooled then
    self.id, self.reused, self.key = pooled.id, pooled.reused + 1, key
    return 1
  end
  local r = __spec_socket("connect", { host = host, port = math.tointeger(tonumber(port)), timeout = self.timeouts[1] })
  if r.error then
    local why = r.error
    if M.unavailable then why = why .. " (" .. M.unavailable .. ")" end
    return nil, why
  end
  self.id, self.reused, self.key = r.id, 0, key
  return 1
end

function Sock:sslhandshake(reused_session, server_name, ssl_verify)
  if not self.id then return nil, "closed" end
  if self.reused > 0 then return true end
  local r = __spec_socket("sslhandshake", { id = self.id, server_name = server_name or nil,
    verify = ssl_verify and true or false, ca = ssl_verify and M.trusted or nil, timeout = self.timeouts[1] })
  if r.error then return nil, r.error end
  return true
end

function Sock:send(data)
  if not self.id then return nil, "closed" end
  local r = __spec_socket("send", { id = self.id, data = bytes(data), timeout = self.timeouts[2] })
  if r.error then return nil, r.error end
  return r.bytes
end

function Sock:receive(pattern)
  if not self.id then return nil, "closed" end
  pattern = pattern or "*l"
  if pattern == "*L" then return nil, "broker: receive('*L') is not emulated" end
  if type(pattern) == "string" and pattern:sub(1, 2) ~= "*l" and pattern:sub(1, 2) ~= "*a" then
    pattern = tonumber(pattern) or pattern
  end
  if type(pattern) == "string" then pattern = pattern:sub(1, 2) end
  local r = __spec_socket("receive", { id = self.id, pattern = pattern, timeout = self.timeouts[3] })
  if r.error then return nil, r.error, r.partial or "" end
  return r.data
end

function Sock:close()
  if not self.id then return nil, "closed" end
  __spec_socket("close", { id = self.id })
  self.id = nil
  return 1
end

function Sock:setkeepalive()
  if not self.id then return nil, "closed" end
  local list = M.pool[self.key] or {}
  M.pool[self.key] = list
  list[#list + 1] = { id = self.id, reused = self.reused }
  self.id = nil
  return 1
end

function Sock:getreusedtimes()
  if not self.id then return nil, "closed" end
  return self.reused
end

function Sock:setoption() return true end

-- ngx.socket.udp: a datagram socket with one peer (setpeername), sent and read through the host
local Udp = {}
Udp.__index = Udp

function M.udp() return setmetatable({ timeout = DEFAULT_TIMEOUT }, Udp) end
function Udp:settimeout(ms) self.timeout = tonumber(ms) or DEFAULT_TIMEOUT end

function Udp:setpeername(host, port)
  if self.id then self:close() end
  if type(host) ~= "string" or host:match("^unix:") or not tonumber(port) then
    return nil, "broker: ngx.socket.udp sends to a host and port (unix sockets are not emulated)"
  end
  local r = __spec_socket("udp_open", { host = host, port = math.tointeger(tonumber(port)), timeout = self.timeout })
  if r.error then return nil, r.error end
  self.id = r.id
  return 1
end

function Udp:send(data)
  if not self.id then return nil, "closed" end
  local r = __spec_socket("udp_send", { id = self.id, data = bytes(data), timeout = self.timeout })
  if r.error then return nil, r.error end
  return 1
end

function Udp:receive(size)
  if not self.id then return nil, "closed" end
  local r = __spec_socket("udp_receive", { id = self.id, size = tonumber(size), timeout = self.timeout })
  if r.error then return nil, r.error end
  return r.data
end

function Udp:close()
  if not self.id then return nil, "closed" end
  __spec_socket("close", { id = self.id })
  self.id = nil
  return 1
end

--- Closes the pooled connections, as a Kong that stops loses its workers' pools.
function M.drain()
  for _, list in pairs(M.pool) do
    for _, c in ipairs(list) do __spec_socket("close", { id = c.id }) end
  end
  M.pool = {}
end

--- ngx.socket.tcp becomes this module's; a pooled connection is dropped (the next spec file has its own).
function M.install()
  rawset(ngx.socket, "tcp", M.tcp)
  rawset(ngx.socket, "udp", M.udp)
  rawset(ngx.socket, "connect", function(host, port, opts)
    local s = M.tcp()
    local ok, err = s:connect(host, port, opts)
    if not ok then return nil, err end
    return s
  end)
end

return M
