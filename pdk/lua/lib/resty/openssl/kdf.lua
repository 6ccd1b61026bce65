-- resty.openssl.kdf on node:crypto (written for broker from lua-resty-openssl's documented API):
-- derive(options) with PBKDF2, HKDF (its three modes) and scrypt, and the OpenSSL 3 form
-- new(name):derive(outlen, options); failures are nil, err. TLS1-PRF is not emulated.
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

function M.new(name)
  local n = tostring(name or ""):upper():gsub("^ID%-", "")
  if n ~= "PBKDF2" and n ~= "HKDF" and n ~= "SCRYPT" then
    return nil, "kdf.new: " .. tostring(name) .. " is not emulated by broker (PBKDF2, HKDF and SCRYPT are)"
  end
  return setmetatable({ name = n }, mt)
end
function M.istype(v) return getmetatable(v) == mt end
function mt.__index:derive(outlen, options)
  local legacy = { outlen = outlen }
  for k, v in pairs(options or {}) do
    local to = PARAMS[k]
    if not to then return nil, "kdf:derive: unknown parameter " .. tostring(k) end
    legacy[to] = to == "hkdf_mode" and (MODES[v] or v) or v
  end
  return H("kdf", self.name, legacy)
end

return M
