-- A request's ngx.ctx as Kong's runloop fills it (written for broker): the fields the host knows
-- (service, route, balancer_data, authenticated_consumer / _credential, plugin_id, KONG_*) read from
-- the kit's state; everything else a plain table field. service, route and balancer_data keep their
-- identity for the request once read; balancer_data.host / .port move the connection, as Kong's
-- balancer reads them.
local H = __host
local FIELDS = {}
for _, name in ipairs(H("ngx_ctx_fields")) do FIELDS[name] = true end
local KEPT = { service = true, route = true }
-- KONG_PROXIED a plugin sets (proxy-cache serving a cached answer) makes Kong answer as for a proxied request
local THROUGH = { authenticated_consumer = true, authenticated_credential = true, KONG_PROXIED = true }

local function balancer_data()
  local own = H("ngx_ctx_get", "balancer_data")
  -- none until a route matched (a request Kong's router answered 404 has none)
  if own == nil then return nil end
  local live = { host = true, port = true }
  return setmetatable({}, {
    __index = function(_, k)
      if live[k] then return (H("ngx_ctx_get", "balancer_data"))[k] end
      return own[k]
    end,
    __newindex = function(_, k, v)
      if live[k] then return H("balancer_set", k, v) end
      own[k] = v
    end,
    __pairs = function()
      local now = H("ngx_ctx_get", "balancer_data")
      for k, v in pairs(own) do if not live[k] then now[k] = v end end
      return next, now, nil
    end,
  })
end

local M = {}

-- Kong's router's uri_captures: the whole match at 0, the groups from 1, the named ones by name; nil when the
-- route's regex has no group. `c` comes from the host as { whole, unnamed = { … }, named = { … } }.
local function uri_captures(c)
  if not c then return nil end
  local t = { [0] = c.whole }
  for k, v in pairs(c.named or {}) do t[k] = v end
  for i, v in ipairs(c.unnamed or {}) do t[i] = v end
  return t
end

--- A new request's ngx.ctx, with Kong's router matches.
function M.new(captures)
  local written = {}
  return setmetatable({ router_matches = { uri_captures = uri_captures(captures) } }, {
    __index = function(t, k)
      if not FIELDS[k] or written[k] then return nil end
      if k == "balancer_data" then
        local b = balancer_data()
        if b ~= nil then rawset(t, k, b) end
        return b
      end
      local v = H("ngx_ctx_get", k)
      if KEPT[k] and v ~= nil then rawset(t, k, v) end
      return v
    end,
    __newindex = function(t, k, v)
      if THROUGH[k] then return H("ngx_ctx_set", k, v) end
      -- a plugin's own value wins over Kong's from now on, nil included
      if FIELDS[k] then written[k] = true end
      rawset(t, k, v)
    end,
  })
end

return M
