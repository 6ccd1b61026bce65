-- resty.lock on a shared dict (written for broker from lua-resty-lock's documented API): a replay
-- is one request on one worker, so nobody else can release a lock it waits for: a lock held
-- elsewhere answers "timeout" at once (or "timeout" after no wait when opts.timeout is 0).
local M = { _VERSION = "0.09" }
local mt = { __index = M }

function M.new(_, dict_name, opts)
  local dict = dict_name ~= nil and ngx.shared[dict_name]
  if not dict then return nil, "dictionary not found" end
  opts = opts or {}
  return setmetatable({ dict = dict, exptime = opts.exptime or 30, timeout = opts.timeout or 5 }, mt)
end

function M.lock(self, key)
  if not key then return nil, "nil key" end
  if self.key then return nil, "locked" end
  local ok, err = self.dict:add(key, true, self.exptime)
  if ok then
    self.key = key
    return 0
  end
  if err ~= "exists" then return nil, err end
  return nil, "timeout"
end

function M.unlock(self)
  if not self.key then return nil, "unlocked" end
  self.dict:delete(self.key)
  self.key = nil
  return 1
end

function M.expire(self, time)
  if not self.key then return nil, "unlocked" end
  local ok, err = self.dict:replace(self.key, true, time or self.exptime)
  if not ok then return nil, err end
  return true
end

return M
