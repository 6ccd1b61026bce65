-- resty.openssl.kdf on node:crypto (written for broker from lua-resty-openssl's documented API):
-- derive(options) with PBKDF2, HKDF (its three modes) and scrypt, and the OpenSSL 3 form
-- new(name) → a context: derive(outlen, options), set_params, reset; failures are nil, err. TLS1-PRF is not
-- emulated.
local H = __host
local M = {
  _VERSION = "1.5.1",
  PBKDF2 = 69, HKDF = 1036, TLS1_PRF = 1021, SCRYPT = 973,
  HKDEF_MODE_EXTRACT_AND_EXPAND = 0, HKDEF_MODE_EXTRACT_ONLY = 1, HKDEF_MODE_EXPAND_ONLY = 2,
}
local NAMES = { [69] = "PBKDF2", [1036] = "HKDF", [1021] = "TLS1-PRF", [973] = "SCRYPT" }

function M.derive(options)
  if type(options) ~= "table" then return nil, "kdf.derive: expect a table at #1" end
  local name = NAMES[options.type]
  if not name then return nil, "kdf.derive: unknown type " .. tostring(options.type) end
  if type(options.outlen) ~= "number" and not (name == "HKDF" and options.hkdf_mode == 1) then
    return nil, "kdf.derive: \"outlen\" must be set"
  end
  return H("kdf", name, options)
end

local mt = { __index = {}, __name = "resty.openssl.kdf" }
-- OpenSSL 3's parameter names → the legacy options
local PARAMS = { pass = "pass", salt = "salt", iter = "pbkdf2_iter", digest = "md", key = "hkdf_key",
  info = "hkdf_info", mode = "hkdf_mode", n = "scrypt_N", r = "scrypt_r", p = "scrypt_p", maxmem_bytes = "scrypt_maxmem" }
local MODES = { EXTRACT_AND_EXPAND = 0, EXTRACT_ONLY = 1, EXPAND_ONLY = 2 }
-- what OpenSSL 3 refuses to derive without (its PROV_R_MISSING_* errors)
local NEEDS = { PBKDF2 = { "pass", "salt" }, SCRYPT = { "pass", "salt" }, HKDF = { "hkdf_key" } }
local SHORT = { pass = "pass", salt = "salt", hkdf_key = "key" }

function M.new(name)
  local n = tostring(name or ""):upper():gsub("^ID%-", "")
  if n ~= "PBKDF2" and n ~= "HKDF" and n ~= "SCRYPT" then
    return nil, "kdf.new: " .. tostring(name) .. " is not emulated by broker (PBKDF2, HKDF and SCRYPT are)"
  end
  return setmetatable({ name = n, params = {} }, mt)
end
function M.istype(v) return getmetatable(v) == mt end
-- As an EVP_KDF_CTX does, the context keeps what was set (by set_params or derive's options) until reset.
function mt.__index:set_params(options)
  local staged = {}
  for k, v in pairs(options or {}) do
    local to = PARAMS[k]
    if not to then return nil, "kdf:set_params: unknown parameter " .. tostring(k) end
    staged[to] = to == "hkdf_mode" and (MODES[v] or v) or v
  end
  for k, v in pairs(staged) do self.params[k] = v end
  return true
end
function mt.__index:reset()
  self.params = {}
  return true
end
function mt.__index:get_provider_name() return "default" end
-- options_count (the third argument) sizes the C parameter array in the library; a Lua table needs none.
function mt.__index:derive(outlen, options)
  local ok, err = self:set_params(options)
  if not ok then return nil, (err:gsub("^kdf:set_params", "kdf:derive")) end
  for _, k in ipairs(NEEDS[self.name]) do
    if self.params[k] == nil then return nil, "kdf:derive: missing " .. SHORT[k] end
  end
  local legacy = { outlen = outlen }
  for k, v in pairs(self.params) do legacy[k] = v end
  return H("kdf", self.name, legacy)
end

return M
