-- resty.aes (lua-resty-string, FFI in OpenResty; written for broker on node:crypto from its
-- documented API): aes:new(key, salt, cipher, hash, hash_rounds, iv_len, enable_padding),
-- aes.cipher(size, mode), aes.hash.*, encrypt(s [, aad]) and decrypt(s [, tag, aad]); GCM's encrypt
-- answers { ciphertext, tag }.
local H = __host
local M = { _VERSION = "0.16" }
local mt = { __index = M }

M.hash = { md5 = "md5", sha1 = "sha1", sha224 = "sha224", sha256 = "sha256", sha384 = "sha384", sha512 = "sha512" }

function M.cipher(size, mode)
  size, mode = size or 128, mode or "cbc"
  local name = "aes-" .. size .. "-" .. mode
  if not H("cipher_info", name) then return nil end
  return { size = size, cipher = mode, method = name }
end

function M.new(self, key, salt, cipher, hash, hash_rounds, iv_len, enable_padding)
  cipher = cipher or M.cipher()
  hash = hash or M.hash.md5
  local key_len = cipher.size // 8
  local _, cipher_iv = H("cipher_info", cipher.method)
  iv_len = iv_len or key_len
  local gen_key, gen_iv
  if type(hash) == "table" then
    if not hash.iv then return nil, "iv is needed" end
    iv_len = #hash.iv
    if iv_len > key_len then return nil, "bad iv length" end
    gen_key = hash.method and hash.method(key) or key
    if #gen_key ~= key_len then return nil, "bad key length" end
    gen_iv = hash.iv
  else
    if salt and #salt ~= 8 then return nil, "salt must be 8 characters or nil" end
    gen_key, gen_iv = H("bytes_to_key", hash, key, salt, hash_rounds or 1, key_len, cipher_iv)
  end
  local aead = cipher.cipher == "gcm" or cipher.cipher == "ccm" or cipher.cipher == "ocb"
  if not aead and cipher_iv > 0 then gen_iv = (gen_iv .. string.rep("\0", cipher_iv)):sub(1, cipher_iv) end
  return setmetatable({ _cipher = cipher.cipher, _method = cipher.method, _key = gen_key, _iv = gen_iv,
    _iv_len = aead and iv_len or nil, _padding = enable_padding == nil or enable_padding }, mt)
end

function M.encrypt(self, s, aad)
  if type(self) ~= "table" then error("bad argument #1 self: table expected, got " .. type(self), 2) end
  local gcm = self._cipher == "gcm"
  local out, tag = H("cipher_run", self._method, true, self._key, self._iv, s, not self._padding,
    gcm and aad or nil, nil, self._iv_len)
  if out == nil then return nil, "EVP_EncryptFinal_ex failed" end
  if gcm then return { out, tag } end
  return out
end

function M.decrypt(self, s, tag, aad)
  if type(self) ~= "table" then error("bad argument #1 self: table expected, got " .. type(self), 2) end
  local gcm = self._cipher == "gcm"
  local out = H("cipher_run", self._method, false, self._key, self._iv, s, not self._padding,
    gcm and aad or nil, gcm and tag or nil, self._iv_len)
  if out == nil then return nil, "EVP_DecryptFinal_ex failed" end
  return out
end

return M
