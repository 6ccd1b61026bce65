-- resty.gcp.request.credentials.accesstoken (lua-resty-gcp), written for broker: it loads, so a plugin
-- that requires it for a provider the fixture does not use runs (Kong's AI plugins require it for Gemini
-- on Vertex); fetching a token stops the run naming it, as no connection to Google is opened. It is a
-- fallback: a lua-resty-gcp of your own wins.
local unsupported = require "broker.unsupported"

local M = {}
function M.new() return unsupported("resty.gcp.request.credentials.accesstoken", "resty.gcp.request.credentials.accesstoken.new") end
return M
