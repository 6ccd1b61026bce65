-- resty.redis (lua-resty-redis), written for broker: it loads, so a plugin that requires it for a
-- feature the fixture does not use runs (Kong's rate-limiting requires it for its redis policy
-- while the local policy never connects); any use fails the fixture, naming resty.redis. It is a
-- fallback: a resty.redis of your own (a stub) on a Lua root or in the system folders wins.
local unsupported = require "broker.unsupported"

local M = {}
function M.new() return unsupported("resty.redis", "resty.redis.new") end
function M.add_commands() return unsupported("resty.redis", "resty.redis.add_commands") end
return M
