-- resty.openssl, the library's root module (written for broker): its version and FIPS questions; the
-- submodules broker emulates (digest, mac, hmac, pkey, cipher, kdf, rand) load on their own.
local M = {
  _VERSION = "1.5.1",
  OPENSSL_3X = true,
  version_num = 0x30000000,
  version_text = "OpenSSL 3.0 (broker: node:crypto)",
}
function M.get_fips_mode() return false end
function M.set_fips_mode(enabled)
  if enabled then return nil, "openssl.set_fips_mode: FIPS mode is not emulated by broker" end
  return true
end
function M.luaossl_compat() end
function M.resty_hmac_compat() end
return M
