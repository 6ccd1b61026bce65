-- resty.openssl.pkey on node:crypto (written for broker from lua-resty-openssl's documented API):
-- new(PEM, DER or JWK text [, { format, type }]), sign, verify, to_PEM, get_key_type, is_private.
-- RSA (PKCS#1 v1.5 and PSS), EC and Ed25519/Ed448 keys; `ecdsa_use_raw` takes and gives the JOSE
-- r||s form. Generating keys, encryption and derive are not emulated. Failures are nil, err.
local H = __host
local digest = require "resty.openssl.digest"
local M = { _VERSION = "1.5.1" }
local mt = { __index = M, __name = "resty.openssl.pkey" }

-- OpenSSL's padding numbers
M.PADDINGS = {
  RSA_PKCS1_PADDING = 1,
  RSA_NO_PADDING = 3,
  RSA_PKCS1_OAEP_PADDING = 4,
  RSA_X931_PADDING = 5,
  RSA_PKCS1_PSS_PADDING = 6,
}

local TYPES = {
  rsa = { id = 6, sn = "rsaEncryption", ln = "rsaEncryption" },
  ["rsa-pss"] = { id = 912, sn = "RSASSA-PSS", ln = "RSASSA-PSS" },
  ec = { id = 408, sn = "id-ecPublicKey", ln = "id-ecPublicKey" },
  ed25519 = { id = 1087, sn = "ED25519", ln = "ED25519" },
  ed448 = { id = 1088, sn = "ED448", ln = "ED448" },
}

function M.new(key, opts)
  if type(key) == "table" then return nil, "pkey.new: generating a key is not emulated by broker" end
  if type(key) ~= "string" then return nil, "pkey.new: expects a string key, got " .. type(key) end
  opts = type(opts) == "table" and opts or {}
  local der, is_private, kind, bits, curve = H("ossl_pkey_new", key, opts.format, opts.type)
  if not der then return nil, is_private end
  return setmetatable({ der = der, private = is_private, kind = kind, bits = bits, curve = curve }, mt)
end

function M.istype(v) return getmetatable(v) == mt end

function M:is_private() return self.private end

function M:get_key_type()
  local t = TYPES[self.kind] or { id = 0, sn = self.kind, ln = self.kind }
  return { id = t.id, sn = t.sn, ln = t.ln }
end

function M:to_PEM(which)
  which = which or (self.private and "private" or "public")
  if which ~= "private" and which ~= "public" then return nil, "pkey:to_PEM: expects \"public\" or \"private\"" end
  return H("ossl_pkey_pem", self.der, self.private, which)
end

-- data and digest name of a sign/verify call (a digest object brings both), its padding checked
local function input(d, md_alg, padding)
  if padding ~= nil and math.type(padding) ~= "integer" then
    return nil, nil, "expects a padding number (pkey.PADDINGS), got " .. type(padding)
  end
  if digest.istype(d) then return d:_input(), d.alg end
  if type(d) ~= "string" then return nil, nil, "expects a string or a digest instance, got " .. type(d) end
  if md_alg ~= nil and type(md_alg) ~= "string" then
    return nil, nil, "expects a string digest name, got " .. type(md_alg)
  end
  return d, md_alg
end

function M:sign(d, md_alg, padding, opts)
  local data, md, err = input(d, md_alg, padding)
  if not data then return nil, "pkey:sign: " .. err end
  return H("ossl_pkey_sign", self.der, self.private, md, data, padding, type(opts) == "table" and opts.ecdsa_use_raw)
end

function M:verify(signature, d, md_alg, padding, opts)
  if type(signature) ~= "string" then return nil, "pkey:verify: expects a string signature, got " .. type(signature) end
  local data, md, err = input(d, md_alg, padding)
  if not data then return nil, "pkey:verify: " .. err end
  return H("ossl_pkey_verify", self.der, self.private, md, data, signature, padding,
    type(opts) == "table" and opts.ecdsa_use_raw)
end

return M
