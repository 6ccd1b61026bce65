-- resty.http (lua-resty-http), written for broker: it loads, so a plugin that requires it to send
-- from a timer runs (Kong's http-log sends its queued entries so, and timers never fire in a
-- replay); making a client fails the fixture, naming resty.http. It is a fallback: a resty.http of
-- your own (a stub) on a Lua root or in the system folders wins, to test the sending code.
local unsupported = require "broker.unsupported"

local M = { _VERSION = "0.17.2" }
function M.new() return unsupported("resty.http", "resty.http.new") end
return M
