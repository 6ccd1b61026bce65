-- resty.openssl.cipher on node:crypto (written for broker from lua-resty-openssl's documented API):
-- new(name), encrypt / decrypt (with AEAD's aad and tag), init, update, update_aead_aad,
-- get_aead_tag, set_aead_tag, final, derive; failures are nil, err. update keeps the input and
-- final ciphers it in one piece (update answers ""), so the concatenated output is the library's.
local H = __host
local M = { _VERSION = "1.5.1" }
local mt = { __index = M, __name = "resty.openssl.cipher" }

function M.new(typ)
  if not typ then return nil, "cipher.new: expect type to be defined" end
  local key_size, iv_size, block_size, mode = H("cipher_info", typ)
  if not key_size then return nil, "cipher.new: invalid cipher type \"" .. tostring(typ) .. "\"" end
  return setmetatable({ typ = typ, key_size = key_size, iv_size = iv_size, block_size = block_size, mode = mode }, mt)
end

function M.istype(v) return getmetatable(v) == mt end
function M.set_buffer_size() return true end

function M:init(key, iv, opts)
  opts = opts or {}
  if type(key) ~= "string" or #key ~= self.key_size then
    return false, string.format("cipher:init: incorrect key size, expect %d", self.key_size)
  end
  local aead = self.mode == "gcm" or self.mode == "ccm" or self.mode == "ocb"
  if not aead and (iv or "") ~= "" and #iv ~= self.iv_size then
    return false, string.format("cipher:init: incorrect iv size, expect %d", self.iv_size)
  end
  self.key, self.iv, self.encrypting = key, iv, opts.is_encrypt and true or false
  self.no_padding = opts.no_padding
  self.parts, self.aad, self.tag, self.out_tag = {}, nil, nil, nil
  return true
end

local function ready(self, name)
  if not self.parts then return nil, "cipher:" .. name .. ": cipher not initalized, call cipher:init first" end
  return true
end

function M:update(...)
  local ok, err = ready(self, "update")
  if not ok then return nil, err end
  for i = 1, select("#", ...) do self.parts[#self.parts + 1] = select(i, ...) end
  return ""
end

function M:update_aead_aad(aad)
  local ok, err = ready(self, "update_aead_aad")
  if not ok then return nil, err end
  self.aad = (self.aad or "") .. aad
  return true
end

function M:set_aead_tag(tag)
  local ok, err = ready(self, "set_aead_tag")
  if not ok then return nil, err end
  if type(tag) ~= "string" then return false, "cipher:set_aead_tag expect a string at #1" end
  self.tag = tag
  return true
end

function M:get_aead_tag(size)
  if not self.out_tag then return nil, "cipher:get_aead_tag: cipher not initalized, call cipher:init first" end
  size = size or self.key_size // 2
  if size > self.key_size then return nil, string.format("tag size %d is too large", size) end
  return self.out_tag:sub(1, size)
end

function M:final(s)
  local ok, err = ready(self, "final")
  if not ok then return nil, err end
  if s then self.parts[#self.parts + 1] = s end
  local out, tag = H("cipher_run", self.typ, self.encrypting, self.key, self.iv, table.concat(self.parts),
    self.no_padding, self.aad, self.tag)
  self.parts = {}
  if out == nil then return nil, "cipher:final: EVP_CipherFinal_ex: " .. tostring(tag) end
  self.out_tag = tag
  return out
end

function M:encrypt(key, iv, s, no_padding, aead_aad)
  local ok, err = self:init(key, iv, { is_encrypt = true, no_padding = no_padding })
  if not ok then return nil, err end
  if aead_aad then self:update_aead_aad(aead_aad) end
  return self:final(s)
end

function M:decrypt(key, iv, s, no_padding, aead_aad, aead_tag)
  local ok, err = self:init(key, iv, { is_encrypt = false, no_padding = no_padding })
  if not ok then return nil, err end
  if aead_aad then self:update_aead_aad(aead_aad) end
  if aead_tag then self:set_aead_tag(aead_tag) end
  return self:final(s)
end

--- OpenSSL's EVP_BytesToKey for this cipher: key, iv.
function M:derive(key, salt, count, md)
  if type(key) ~= "string" then return nil, nil, "cipher:derive: expect a string at #1" end
  if salt ~= nil and type(salt) ~= "string" then return nil, nil, "cipher:derive: expect a string at #2" end
  if count ~= nil and type(count) ~= "number" then return nil, nil, "cipher:derive: expect a number at #3" end
  if salt and #salt > 8 then salt = salt:sub(1, 8) end
  local k, iv, err = H("bytes_to_key", md or "sha1", key, salt, count or 1, self.key_size, self.iv_size)
  if not k then return nil, nil, "cipher:derive: " .. tostring(err) end
  return k, iv
end

return M
