-- resty.lrucache: a bounded cache with TTLs (written for broker; plain Lua, least recently used first out).
local M = { _VERSION = "0.13" }
M.__index = M

function M.new(size)
  if type(size) ~= "number" or size < 1 then return nil, "size too small" end
  return setmetatable({ size = size, items = {}, order = {}, n = 0 }, M)
end

local function touch(self, key)
  for i, k in ipairs(self.order) do
    if k == key then table.remove(self.order, i) break end
  end
  self.order[#self.order + 1] = key
end

function M:get(key)
  local e = self.items[key]
  if not e then return nil end
  if e.exp and e.exp <= ngx.now() then
    return nil, e.value, e.flags
  end
  touch(self, key)
  return e.value, nil, e.flags
end

function M:set(key, value, ttl, flags)
  if not self.items[key] then
    self.n = self.n + 1
    if self.n > self.size then
      local old = table.remove(self.order, 1)
      self.items[old] = nil
      self.n = self.n - 1
    end
  end
  self.items[key] = { value = value, exp = ttl and ttl > 0 and ngx.now() + ttl or nil, flags = flags }
  touch(self, key)
end

function M:delete(key)
  if self.items[key] then
    self.items[key] = nil
    self.n = self.n - 1
    for i, k in ipairs(self.order) do if k == key then table.remove(self.order, i) break end end
    return true
  end
  return false
end

function M:count() return self.n end
function M:capacity() return self.size end
function M:flush_all() self.items, self.order, self.n = {}, {}, 0 end
function M:get_keys(max, res)
  res = res or {}
  for i = #self.order, 1, -1 do
    res[#res + 1] = self.order[i]
    if max and max > 0 and #res >= max then break end
  end
  return res
end
return M
