-- resty.redis for `broker pdk test` (written for broker from lua-resty-redis's documentation): the
-- client over ngx.socket.tcp (broker.spec.sockets, real connections), RESP2 on the wire. Every
-- command is a method (red:get, red:eval, red:acl …); replies as lua-resty-redis gives them: a
-- status as its text, an integer as a number, a missing bulk or multi-bulk as ngx.null, an error
-- reply as nil and its message (in a pipeline, { false, message }).
local null = ngx.null
local sub, byte, concat = string.sub, string.byte, table.concat

local M = { _VERSION = "0.31" }
local mt = { __index = M }

--- A new client, unconnected.
function M.new()
  local sock, err = ngx.socket.tcp()
  if not sock then return nil, err end
  return setmetatable({ _sock = sock }, mt)
end

function M:set_timeout(ms) return self._sock:settimeout(ms) end
function M:set_timeouts(c, s, r) return self._sock:settimeouts(c, s, r) end

function M:connect(host, port, opts)
  if type(port) == "table" then opts, port = port, nil end
  opts = opts or {}
  local ok, err = self._sock:connect(host, port, { pool = opts.pool, pool_size = opts.pool_size, backlog = opts.backlog })
  if not ok then return nil, err end
  if opts.ssl then
    ok, err = self._sock:sslhandshake(false, opts.server_name, opts.ssl_verify)
    if not ok then return nil, "failed to do ssl handshake: " .. tostring(err) end
  end
  return 1
end

function M:set_keepalive(...) return self._sock:setkeepalive(...) end
function M:get_reused_times() return self._sock:getreusedtimes() end
function M:close() return self._sock:close() end

-- an argument as LuaJIT's tostring writes it: a whole number without a decimal point
local function text(v)
  if type(v) == "number" then
    if v == math.floor(v) and math.abs(v) < 1e15 then return string.format("%d", v) end
    return string.format("%.14g", v)
  end
  if type(v) == "boolean" or v == nil or v == null then return tostring(v) end
  return v
end

local function request(args)
  local out = { "*", #args, "\r\n" }
  for _, a in ipairs(args) do
    local s = text(a)
    out[#out + 1] = "$" .. #s .. "\r\n" .. s .. "\r\n"
  end
  return concat(out)
end

local function read_reply(self, sock)
  local line, err = sock:receive()
  if not line then return nil, err end
  local prefix, rest = byte(line), sub(line, 2)
  if prefix == 43 then -- +
    return rest
  elseif prefix == 45 then -- -
    return false, rest
  elseif prefix == 58 then -- :
    return math.tointeger(tonumber(rest)) or tonumber(rest)
  elseif prefix == 36 then -- $
    local size = tonumber(rest)
    if size < 0 then return null end
    local data, rerr = sock:receive(size + 2)
    if not data then return nil, rerr end
    return sub(data, 1, -3)
  elseif prefix == 42 then -- *
    local n = tonumber(rest)
    if n < 0 then return null end
    local vals = {}
    for i = 1, n do
      local v, verr = read_reply(self, sock)
      if v == nil then return nil, verr end
      -- an error inside a multi-bulk reply stays in place as { false, err }
      if v == false then vals[i] = { false, verr } else vals[i] = v end
    end
    return vals
  end
  return nil, "bad reply"
end

local function command(self, ...)
  local args = { ... }
  if rawget(self, "_reqs") then
    self._reqs[#self._reqs + 1] = request(args)
    return "OK"
  end
  local sock = self._sock
  local bytes, err = sock:send(request(args))
  if not bytes then return nil, err end
  local res, rerr = read_reply(self, sock)
  if res == false then return nil, rerr end
  return res, rerr
end

function M:read_reply()
  local res, err = read_reply(self, self._sock)
  if res == false then return nil, err end
  return res, err
end

function M:init_pipeline() self._reqs = {} end
function M:cancel_pipeline() self._reqs = nil end

function M:commit_pipeline()
  local reqs = rawget(self, "_reqs")
  if not reqs then return nil, "no pipeline" end
  self._reqs = nil
  local bytes, err = self._sock:send(concat(reqs))
  if not bytes then return nil, err end
  local out = {}
  for i = 1, #reqs do
    local res, rerr = read_reply(self, self._sock)
    if res == nil then return nil, rerr end
    if res == false then out[i] = { false, rerr } else out[i] = res end
  end
  return out
end

function M:hmset(key, ...)
  if select("#", ...) == 1 and type((...)) == "table" then
    local args = {}
    for k, v in pairs((...)) do args[#args + 1] = k args[#args + 1] = v end
    return command(self, "hmset", key, table.unpack(args))
  end
  return command(self, "hmset", key, ...)
end

function M.array_to_hash(_, t)
  local h = {}
  for i = 1, #t, 2 do h[t[i]] = t[i + 1] end
  return h
end

--- Names that become commands (every other name does anyway: any method of the client is a command).
function M.add_commands(...)
  for _, name in ipairs({ ... }) do
    M[name] = function(self, ...) return command(self, name, ...) end
  end
end

setmetatable(M, { __index = function(_, name)
  if type(name) ~= "string" then return nil end
  local f = function(self, ...) return command(self, name, ...) end
  rawset(M, name, f)
  return f
end })

return M
