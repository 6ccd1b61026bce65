-- resty.openssl.hmac on node:crypto (written for broker from lua-resty-openssl's documented API):
-- new(key, [md_alg]) (sha1 by default), update(...), final([s]), reset(); failures are nil, err.
local H = __host
local M = { _VERSION = "1.5.1" }
local mt = { __index = M, __name = "resty.openssl.hmac" }

function M.new(key, md_alg)
  if type(key) ~= "string" then return nil, "hmac.new: expects a string key, got " .. type(key) end
  md_alg = md_alg or "sha1"
  if type(md_alg) ~= "string" then return nil, "hmac.new: expects a string digest name, got " .. type(md_alg) end
  local ok, err = H("ossl_digest_known", md_alg)
  if not ok then return nil, (err:gsub("^digest%.new", "hmac.new")) end
  return setmetatable({ key = key, alg = md_alg, parts = {} }, mt)
end

function M.istype(v) return getmetatable(v) == mt end

M.update, M.reset = require("broker.input_parts").methods("hmac")

function M:final(s)
  if s ~= nil then
    local ok, err = self:update(s)
    if not ok then return nil, err end
  end
  local out, err = H("ossl_hmac", self.alg, self.key, table.concat(self.parts))
  self.parts = {}
  return out, err
end

return M
