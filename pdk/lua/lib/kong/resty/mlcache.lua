-- kong.resty.mlcache: Kong's copy of the multi-level cache (an LRU in front of a shared dict,
-- with locks), which pre-function and post-function keep compiled code in. Written for broker:
-- one replay is one worker, so a per-instance Lua table with TTLs gives the same answers
-- (get runs the callback once per key; peek/set/delete/purge as documented).
local M = { _VERSION = "2.7.0 (broker emulation)" }
M.__index = M

function M.new(name, shm, opts)
  if type(name) ~= "string" then return nil, "name must be a string" end
  if type(shm) ~= "string" then return nil, "shm must be a string" end
  opts = opts or {}
  return setmetatable({ name = name, shm = shm, ttl = opts.ttl or 30, neg_ttl = opts.neg_ttl or 5, items = {} }, M)
end

local function fresh(e) return e and (e.exp == 0 or e.exp > ngx.now()) end

function M:get(key, opts, cb, ...)
  if type(key) ~= "string" then error("key must be a string", 2) end
  local e = self.items[key]
  if fresh(e) then return e.value, nil, 1 end
  if cb == nil then return nil, nil, -1 end
  local ok, value, err, ttl = pcall(cb, ...)
  if not ok then return nil, "callback threw an error: " .. tostring(value) end
  if err then return nil, tostring(err) end
  ttl = ttl or (opts and (value == nil and opts.neg_ttl or opts.ttl)) or (value == nil and self.neg_ttl or self.ttl)
  self.items[key] = { value = value, exp = ttl > 0 and ngx.now() + ttl or 0 }
  return value, nil, 3
end

function M:peek(key)
  local e = self.items[key]
  if not e then return nil end
  local remaining = e.exp == 0 and 0 or e.exp - ngx.now()
  return remaining, nil, e.value, remaining <= 0 and e.exp ~= 0
end

function M:set(key, opts, value)
  local ttl = opts and opts.ttl or self.ttl
  self.items[key] = { value = value, exp = ttl > 0 and ngx.now() + ttl or 0 }
  return true
end

function M:delete(key) self.items[key] = nil; return true end
function M:purge() self.items = {}; return true end
function M:update() return true end
return M
