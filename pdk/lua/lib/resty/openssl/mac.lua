-- resty.openssl.mac on node:crypto (written for broker from lua-resty-openssl's documented API):
-- new(key, "HMAC", nil, md_alg), update(...), final([s]), reset(); only HMAC is emulated, and
-- failures are nil, err.
local M, make = require("broker.hmac_object")("mac")

function M.new(key, typ, cipher, md_alg)
  if type(key) ~= "string" then return nil, "mac.new: expects a string key, got " .. type(key) end
  if type(typ) ~= "string" or typ:upper() ~= "HMAC" then
    return nil, "mac.new: only HMAC is emulated by broker, not " .. tostring(typ)
  end
  if cipher ~= nil then return nil, "mac.new: HMAC takes no cipher" end
  return make(key, md_alg)
end

return M
