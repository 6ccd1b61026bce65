-- ngx.shared.<name>: in-memory dictionaries that live as long as the VM (a replay's worker).
local now = function() return ngx.now() end
local Dict = {}
Dict.__index = Dict

local function live(self, key)
  local e = self.data[key]
  if e and e.exp and e.exp <= now() then self.data[key] = nil return nil end
  return e
end

function Dict:get(key) local e = live(self, key) if e then return e.value, e.flags end return nil end
function Dict:get_stale(key) local e = self.data[key] if e then return e.value, e.flags, e.exp and e.exp <= now() end return nil end
function Dict:set(key, value, exptime, flags)
  if value == nil then self.data[key] = nil return true end
  self.data[key] = { value = value, flags = flags, exp = exptime and exptime > 0 and now() + exptime or nil }
  return true, nil, false
end
Dict.safe_set = Dict.set
function Dict:add(key, value, exptime, flags)
  if live(self, key) then return false, "exists" end
  return self:set(key, value, exptime, flags)
end
Dict.safe_add = Dict.add
function Dict:replace(key, value, exptime, flags)
  if not live(self, key) then return false, "not found" end
  return self:set(key, value, exptime, flags)
end
function Dict:delete(key) self.data[key] = nil end
function Dict:incr(key, value, init, init_ttl)
  local e = live(self, key)
  if not e then
    if init == nil then return nil, "not found" end
    self:set(key, init, init_ttl)
    e = self.data[key]
  end
  if type(e.value) ~= "number" then return nil, "not a number" end
  e.value = e.value + value
  return e.value
end
function Dict:ttl(key)
  local e = live(self, key)
  if not e then return nil, "not found" end
  return e.exp and e.exp - now() or 0
end
function Dict:expire(key, exptime)
  local e = live(self, key)
  if not e then return nil, "not found" end
  e.exp = exptime > 0 and now() + exptime or nil
  return true
end
function Dict:flush_all() self.data = {} end
function Dict:flush_expired() local n = 0 for k in pairs(self.data) do if not live(self, k) then n = n + 1 end end return n end
function Dict:get_keys(max)
  local keys = {}
  for k in pairs(self.data) do
    if live(self, k) then keys[#keys + 1] = k end
    if max and max > 0 and #keys >= max then break end
  end
  return keys
end
-- what a dictionary holds, in nginx's 4 KB pages: an estimate (keys and values with a slab's overhead)
local PAGE = 4096
local function pages(self)
  local bytes = 0
  for k, e in pairs(self.data) do bytes = bytes + #tostring(k) + #tostring(e.value) + 64 end
  return math.ceil(bytes / PAGE)
end
function Dict:capacity() return self.size end
function Dict:free_space() return math.max(0, self.size - pages(self) * PAGE) end

local MB = 1024 * 1024
-- A dictionary nobody declared has this size (a plugin's own, declared in Kong with nginx_http_lua_shared_dict).
local DEFAULT_SIZE = 5 * MB
local shared = setmetatable({}, {
  __index = function(t, name)
    local d = setmetatable({ name = name, data = {}, size = DEFAULT_SIZE }, Dict)
    rawset(t, name, d)
    return d
  end,
})
-- The dictionaries Kong 3.x's nginx configuration declares for the http subsystem (its nginx_kong template,
-- mem_cache_size 128m by default): `pairs(ngx.shared)` lists them in Kong, so it does here.
for name, size in pairs({
  kong = 5, kong_locks = 8, kong_healthchecks = 5, kong_cluster_events = 5, kong_rate_limiting_counters = 12,
  kong_core_db_cache = 128, kong_core_db_cache_miss = 12, kong_db_cache = 128, kong_db_cache_miss = 12,
  kong_secrets = 5,
}) do
  rawset(shared, name, setmetatable({ name = name, data = {}, size = size * MB }, Dict))
end
return shared
