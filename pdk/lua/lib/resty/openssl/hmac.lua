-- resty.openssl.hmac on node:crypto (written for broker from lua-resty-openssl's documented API):
-- new(key, [md_alg]) (sha1 by default), update(...), final([s]), reset(); failures are nil, err.
local M, make = require("broker.hmac_object")("hmac")

M.new = make

return M
