-- resty.counter (lua-resty-counter, which Kong ships; kong.reports requires it), written for
-- broker from the library's documented behaviour: increments are counted in the worker and only
-- reach the shared dict on sync(). OpenResty syncs from a timer every sync_interval seconds;
-- timers never fire in a replay, so here only an explicit c:sync() moves them.
local M = {}
local mt = { __index = M }

--- A counter over ngx.shared[shdict_name]; nil, err when there is no such dict.
function M.new(shdict_name, sync_interval)
  local dict = ngx.shared[shdict_name]
  if not dict then return nil, "shared dict \"" .. tostring(shdict_name) .. "\" not found" end
  if sync_interval ~= nil and type(sync_interval) ~= "number" then
    return nil, "expect sync_interval to be a number"
  end
  return setmetatable({ dict = dict, increments = {}, sync_interval = sync_interval }, mt)
end

--- Adds step (1) to key in this worker.
function M:incr(key, step)
  step = step or 1
  self.increments[key] = (self.increments[key] or 0) + step
  return true
end

--- Moves this worker's increments into the shared dict; false when one could not be added.
function M:sync()
  local ok = true
  for k, v in pairs(self.increments) do
    self.increments[k] = nil
    local _, err = self.dict:incr(k, v, 0)
    if err then
      ngx.log(ngx.WARN, "error increasing counter in shdict key: ", k, ", err: ", err)
      ok = false
    end
  end
  return ok
end

--- The synced value of key (what every worker sees), nil when never synced.
function M:get(key)
  return self.dict:get(key)
end

--- Subtracts number from key's synced value (0 when never synced); the new value.
function M:reset(key, number)
  if not number then return nil, "expect a number at #2" end
  return self.dict:incr(key, -number, 0)
end

--- The synced keys (up to max_count).
function M:get_keys(max_count)
  return self.dict:get_keys(max_count)
end

return M
