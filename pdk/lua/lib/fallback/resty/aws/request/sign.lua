-- resty.aws.request.sign (lua-resty-aws), written for broker: it loads, so a plugin that requires it for
-- a provider the fixture does not use runs (Kong's ai-proxy requires it for Bedrock); signing a request
-- stops the run naming it. It is a fallback: a lua-resty-aws of your own wins.
local unsupported = require "broker.unsupported"

return function() return unsupported("resty.aws.request.sign", "resty.aws.request.sign") end
