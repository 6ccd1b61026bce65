-- The HMAC object resty.openssl.hmac and resty.openssl.mac both hand out (lua-resty-openssl's documented
-- API): update(...), final([s]), reset(), istype(); the digest is computed on node:crypto at final.
-- Called with the module's short name, it returns the module table and its constructor, which
-- checks the key and the digest name (sha1 by default) and answers nil, "<name>.new: …" otherwise.
local H = __host

return function(name)
  local M = { _VERSION = "1.5.1" }
  local mt = { __index = M, __name = "resty.openssl." .. name }

  local function make(key, md_alg)
    if type(key) ~= "string" then return nil, name .. ".new: expects a string key, got " .. type(key) end
    md_alg = md_alg or "sha1"
    if type(md_alg) ~= "string" then
      return nil, name .. ".new: expects a string digest name, got " .. type(md_alg)
    end
    local ok, err = H("ossl_digest_known", md_alg)
    if not ok then return nil, (err:gsub("^digest%.new", name .. ".new")) end
    return setmetatable({ key = key, alg = md_alg, parts = {} }, mt)
  end

  function M.istype(v) return getmetatable(v) == mt end

  M.update, M.reset = require("broker.input_parts").methods(name)

  function M:final(s)
    if s ~= nil then
      local ok, err = self:update(s)
      if not ok then return nil, err end
    end
    local out, err = H("ossl_hmac", self.alg, self.key, table.concat(self.parts))
    self.parts = {}
    return out, err
  end

  return M, make
end
