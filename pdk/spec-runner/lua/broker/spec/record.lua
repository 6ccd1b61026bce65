-- What `broker pdk test --record` writes beside a proxied request (written for broker): the test that
-- sent it and the spec's line, every row of the database, and what the shared dictionaries hold
-- before the request, so the fixture replays it from the same state.
local M = {}

-- the spec's line that sent the request: the first frame outside broker's Lua
local function spec_line()
  for level = 2, 60 do
    local info = debug.getinfo(level, "Sl")
    if not info then break end
    if info.what ~= "C" and not info.source:find("^@broker:") then return info.short_src .. ":" .. info.currentline end
  end
end

local function shared_dicts()
  local out = {}
  for name, dict in pairs(ngx.shared) do
    local entries, any = {}, false
    for _, key in ipairs(dict:get_keys(0)) do
      local value, flags = dict:get(key)
      local ttl = dict:ttl(key)
      if value ~= nil then
        entries[key] = { value = value, ttl = ttl and ttl > 0 and ttl or nil, flags = flags ~= 0 and flags or nil }
        any = true
      end
    end
    if any then out[name] = entries end
  end
  return out
end

function M.state()
  return { test = require("busted.core").running(), line = spec_line(), db = require("broker.db").given,
    ngx_shared = shared_dicts() }
end

return M
