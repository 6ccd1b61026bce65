-- resty.hmac (jkeys089's lua-resty-hmac-ffi, FFI over OpenSSL; lua-resty-jwt signs HS256/384/512 with it),
-- written for broker on resty.openssl.hmac: hmac:new(key [, hmac.ALGOS.<name>]) (MD5 by default), update(s),
-- final([s] [, hex_output]) and reset(), each answering as the library does (nil for a failure).
local ossl_hmac = require "resty.openssl.hmac"
local to_hex = require("resty.string").to_hex

local M = { _VERSION = "0.06", ALGOS = { MD5 = "md5", SHA1 = "sha1", SHA256 = "sha256", SHA384 = "sha384", SHA512 = "sha512" } }
local mt = { __index = M }

function M.new(_, key, hash_algo)
  if type(key) ~= "string" then return nil end
  local h = ossl_hmac.new(key, hash_algo or M.ALGOS.MD5)
  if not h then return nil end
  return setmetatable({ _h = h }, mt)
end

function M:update(s) return (self._h:update(s)) ~= nil end

function M:final(s, hex_output)
  local out = self._h:final(s)
  if not out then return nil end
  if hex_output == true then return to_hex(out) end
  return out
end

function M:reset() self._h:reset() return true end

return M
