-- resty.openssl.digest on node:crypto (written for broker from lua-resty-openssl's documented API):
-- new(alg), update(...), final([s]), reset(); failures are nil, err. The input is kept in Lua and
-- hashed once by final, which also starts the digest afresh.
local H = __host
local M = { _VERSION = "1.5.1" }
local mt = { __index = M, __name = "resty.openssl.digest" }

--- digest.new([alg]): sha1 when no name is given, as OpenSSL's default.
function M.new(alg)
  alg = alg or "sha1"
  if type(alg) ~= "string" then return nil, "digest.new: expects a string digest name, got " .. type(alg) end
  local ok, err = H("ossl_digest_known", alg)
  if not ok then return nil, err end
  return setmetatable({ alg = alg, parts = {} }, mt)
end

function M.istype(v) return getmetatable(v) == mt end

M.update, M.reset = require("broker.input_parts").methods("digest")

-- the bytes hashed so far, for pkey:sign / pkey:verify given a digest object
function M:_input() return table.concat(self.parts) end

function M:final(s)
  if s ~= nil then
    local ok, err = self:update(s)
    if not ok then return nil, err end
  end
  local out, err = H("ossl_digest", self.alg, self:_input())
  self.parts = {}
  return out, err
end

return M
