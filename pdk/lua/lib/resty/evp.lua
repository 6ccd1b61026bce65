-- resty.evp (lua-resty-jwt's own FFI binding of OpenSSL's EVP API), written for broker on resty.openssl's pkey
-- and x509: RSASigner / ECSigner (a PEM private key; sign(message, digest_name) answers OpenSSL's signature, DER
-- for ECDSA, which ECSigner:get_raw_sig turns into JOSE's r||s), RSAVerifier / ECVerifier (from a Cert or a
-- PublicKey; verify(message, sig, digest_name) answers true or false, "Verification failed"; ECDSA signatures
-- are raw r||s, as JWS has them), Cert (PEM or DER: get_der, get_fingerprint, get_public_key, verify_trust of a
-- file of trusted PEM certificates, read relative to the fixture's folder) and PublicKey. RSA encryption (JWE's
-- RSA-OAEP) and password-protected keys answer nil, err naming them.
local pkey = require "resty.openssl.pkey"
local x509 = require "resty.openssl.x509"

local M = {}
M.CONST = {
  SHA1_DIGEST = "SHA1", SHA256_DIGEST = "SHA256", SHA384_DIGEST = "SHA384", SHA512_DIGEST = "SHA512",
  RSA_PKCS1_PADDING = 1, RSA_SSLV23_PADDING = 2, RSA_NO_PADDING = 3, RSA_PKCS1_OAEP_PADDING = 4,
  RSA_X931_PADDING = 5, RSA_PKCS1_PSS_PADDING = 6,
  NID_rsaEncryption = 6, EVP_PKEY_RSA = 6, EVP_PKEY_ALG_CTRL = 0x1000, EVP_PKEY_CTRL_RSA_PADDING = 0x1000 + 1,
  EVP_PKEY_OP_TYPE_CRYPT = 768, EVP_PKEY_CTRL_RSA_OAEP_MD = 0x1000 + 9,
}

local function instance(class, fields) return setmetatable(fields, { __index = class }) end

local function private_key(pem, password)
  if password ~= nil then return nil, "resty.evp: password-protected keys are not emulated by broker" end
  if type(pem) ~= "string" then return nil, "resty.evp: a PEM private key is needed" end
  local key, err = pkey.new(pem, { format = "PEM", type = "pr" })
  if not key then return nil, err end
  return key
end

local RSASigner = { algo = "RSA" }
M.RSASigner = RSASigner
function RSASigner.new(class, pem_private_key, password, padding)
  local key, err = private_key(pem_private_key, password)
  if not key then return nil, err end
  return instance(class, { key = key, padding = padding })
end
function RSASigner.sign(self, message, digest_name)
  return self.key:sign(message, digest_name, self.padding)
end

local ECSigner = { algo = "ECDSA" }
M.ECSigner = ECSigner
function ECSigner.new(class, pem_private_key, password) return RSASigner.new(class, pem_private_key, password) end
function ECSigner.sign(self, message, digest_name) return self.key:sign(message, digest_name) end

-- one DER INTEGER at i: its bytes without sign padding, and where the next element starts
local function der_integer(s, i)
  if s:byte(i) ~= 0x02 then return nil end
  local len = s:byte(i + 1)
  local v = s:sub(i + 2, i + 1 + len):gsub("^%z+", "")
  return v, i + 2 + len
end

--- A DER ECDSA signature as JOSE's r||s, each padded to the curve's size.
function ECSigner.get_raw_sig(self, signature)
  if not signature then return nil, "Must pass a signature to convert" end
  local at = signature:byte(2) >= 0x80 and 4 or 3 -- SEQUENCE header (long length form past 127 bytes)
  local r, next_at = der_integer(signature, at)
  local s = r and der_integer(signature, next_at)
  if not s then return nil, "resty.evp: not a DER ECDSA signature" end
  local size = math.ceil(self.key.bits / 8)
  return string.rep("\0", size - #r) .. r .. string.rep("\0", size - #s) .. s
end

local RSAVerifier = {}
M.RSAVerifier = RSAVerifier
function RSAVerifier.new(class, key_source, padding)
  if not key_source then return nil, "You must pass in an key_source for a public key" end
  return instance(class, { public_key = key_source.public_key, padding = padding })
end
function RSAVerifier.verify(self, message, sig, digest_name)
  if self.public_key:verify(sig, message, digest_name, self.padding) then return true, nil end
  return false, "Verification failed"
end

local ECVerifier = {}
M.ECVerifier = ECVerifier
function ECVerifier.new(class, key_source) return RSAVerifier.new(class, key_source) end
function ECVerifier.verify(self, message, sig, digest_name)
  if self.public_key:verify(sig, message, digest_name, nil, { ecdsa_use_raw = true }) then return true, nil end
  return false, "Verification failed"
end

local Cert = {}
M.Cert = Cert
function Cert.new(class, payload)
  if not payload then return nil, "Must pass a PEM or binary DER cert" end
  local cert, err = x509.new(payload, payload:find("-----BEGIN", 1, true) and "PEM" or "DER")
  if not cert then return nil, err end
  return instance(class, { x509 = cert, public_key = cert:get_pubkey() })
end
function Cert.get_der(self) return self.x509:tostring("DER") end
function Cert.get_fingerprint(self, digest_name)
  local raw, err = self.x509:digest(digest_name)
  if not raw then return nil, err end
  return (raw:gsub(".", function(c) return string.format("%02X:", c:byte()) end):sub(1, -2))
end
function Cert.get_public_key(self) return self.public_key end

-- the certificates of a PEM file
local function read_trusted(path)
  local f, err = io.open(path, "r")
  if not f then return nil, err end
  local text = f:read("*a")
  f:close()
  local certs = {}
  for pem in text:gmatch("%-%-%-%-%-BEGIN CERTIFICATE%-%-%-%-%-.-%-%-%-%-%-END CERTIFICATE%-%-%-%-%-") do
    certs[#certs + 1] = x509.new(pem, "PEM")
  end
  return certs
end

--- Whether the certificate chains, through the file's certificates, to a self-signed one of them, as OpenSSL's
--- X509_verify_cert checks it (signatures and validity dates, no partial chains); false and OpenSSL's reason else.
function Cert.verify_trust(self, trusted_cert_file)
  local store, err = read_trusted(trusted_cert_file)
  if not store then return false, err end
  local now, cert = ngx.time(), self.x509
  for depth = 0, 9 do
    if now < cert:get_not_before() then return false, "certificate is not yet valid" end
    if now > cert:get_not_after() then return false, "certificate has expired" end
    local issuer_name = cert:get_issuer_name():tostring()
    if cert:get_subject_name():tostring() == issuer_name then
      local der = cert:tostring("DER")
      for _, trusted in ipairs(store) do
        if trusted:tostring("DER") == der and cert:verify(cert:get_pubkey()) then return true, nil end
      end
      return false, depth == 0 and "self-signed certificate" or "self-signed certificate in certificate chain"
    end
    local issuer
    for _, candidate in ipairs(store) do
      if candidate:get_subject_name():tostring() == issuer_name then issuer = candidate break end
    end
    if not issuer then return false, "unable to get local issuer certificate" end
    if not cert:verify(issuer:get_pubkey()) then return false, "certificate signature failure" end
    cert = issuer
  end
  return false, "certificate chain too long"
end

local PublicKey = {}
M.PublicKey = PublicKey
function PublicKey.new(class, payload)
  if not payload then return nil, "Must pass a PEM or binary DER public key" end
  local key, err = pkey.new(payload, { format = payload:find("-----BEGIN", 1, true) and "PEM" or "DER", type = "pu" })
  if not key then return nil, err end
  return instance(class, { public_key = key })
end

local function no_rsa_encryption() return nil, "resty.evp: RSA encryption (JWE's RSA-OAEP) is not emulated by broker" end
M.RSAEncryptor = { new = no_rsa_encryption }
M.RSADecryptor = { new = no_rsa_encryption }

return M
