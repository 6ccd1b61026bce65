-- kong.runloop.balancer as a replay has it (written for broker): Kong's runloop balances over upstream
-- entities with nginx's balancer (ngx.balancer, OpenResty's C), and a replay connects to the fixture's
-- service alone. What plugins read answers as a Kong without upstream entities (prometheus's upstream
-- health metrics: none), with Kong's messages; the runloop's own functions raise an error naming them.
-- Like Kong 3.x, it exports no get_all_upstreams (kong.runloop.balancer.upstreams has it).
local upstreams = require "kong.runloop.balancer.upstreams"

local M = {
  get_upstream_by_name = upstreams.get_upstream_by_name,
  get_upstream_by_id = upstreams.get_upstream_by_id,
}

--- The health of an upstream's targets: there is no upstream in a replay.
function M.get_upstream_health() return nil, "upstream not found" end

--- Whether an upstream's balancer is healthy: there is no upstream in a replay.
function M.get_balancer_health() return nil, "upstream not found" end

-- health events come from health checks, which a replay does not run
function M.subscribe_to_healthcheck_events() end
function M.unsubscribe_from_healthcheck_events() end

local EXPORTED = { init = true, execute = true, after_balance = true, on_target_event = true,
  on_upstream_event = true, post_health = true, stop_healthcheckers = true, set_host_header = true, set_cookie = true }

return setmetatable(M, {
  __index = function(_, name)
    if not EXPORTED[name] then return nil end
    return function()
      error("kong.runloop.balancer." .. tostring(name) .. " is not emulated by broker: a replay has no upstream " ..
        "entities and connects to the fixture's service (kong.service.set_target, ngx.ctx.balancer_data are emulated)", 2)
    end
  end,
})
