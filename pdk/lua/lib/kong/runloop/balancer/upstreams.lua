-- kong.runloop.balancer.upstreams as a replay has it (written for broker): a Kong without upstream
-- entities, since a replay proxies to the fixture's service alone.
local M = {}

--- Every upstream by `<workspace>:<name>`: none.
function M.get_all_upstreams() return {} end

--- An upstream by name: none.
function M.get_upstream_by_name() return nil end

--- An upstream by id: none.
function M.get_upstream_by_id() return nil end

return M
