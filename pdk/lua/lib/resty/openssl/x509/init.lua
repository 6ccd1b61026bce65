-- resty.openssl.x509 on node:crypto's X509Certificate (written for broker from lua-resty-openssl's documented
-- API): new(PEM or DER [, "PEM" | "DER" | "*"]) reads a certificate; its getters (subject_name, issuer_name,
-- not_before, not_after, lifetime, pubkey, serial_number, version, subject_alt_name, basic_constraints,
-- signature_name / nid / digest_name, ocsp_url, crl_url, the extensions' critical flags), digest,
-- pubkey_digest, verify, check_private_key, tostring and to_PEM. Making or changing a certificate (new()
-- with no text, the setters, sign) answers nil, err naming it. Failures are nil, err, as the library's.
local H = __host
local name = require "resty.openssl.x509.name"
local altname = require "resty.openssl.x509.altname"
local bn = require "resty.openssl.bn"
local digest = require "resty.openssl.digest"
local pkey = require "resty.openssl.pkey"

local M = { _VERSION = "1.5.1" }
local mt = { __index = M, __name = "resty.openssl.x509" }

local function unwritten(what) return nil, "x509" .. what .. " is not emulated by broker (certificates are read, not made)" end

function M.new(txt, fmt)
  if txt == nil then return unwritten(".new() without a certificate") end
  if type(txt) ~= "string" then return nil, "x509.new: expect nil or a string at #1" end
  local info, err = H("ossl_x509_new", txt, fmt)
  if not info then return nil, err end
  return setmetatable({ info = info }, mt)
end

function M.istype(v) return getmetatable(v) == mt end
function M.dup() return unwritten(".dup") end

function M:get_subject_name() return name._from(self.info.subject) end
function M:get_issuer_name() return name._from(self.info.issuer) end
function M:get_not_before() return self.info.not_before end
function M:get_not_after() return self.info.not_after end
function M:get_lifetime() return self.info.not_before, self.info.not_after end
function M:get_version() return self.info.version end
function M:get_serial_number() return bn.from_hex(self.info.serial) end
function M:get_pubkey() return pkey.new(self.info.pubkey, { format = "DER", type = "pu" }) end

function M:get_subject_alt_name()
  if #self.info.alt == 0 then return nil, nil end
  return altname._from(self.info.alt)
end

function M:get_basic_constraints(key)
  local bc = self.info.basic
  if not bc then return nil, nil end
  if key == nil then return { ca = bc.ca, pathlen = bc.pathlen } end
  return bc[tostring(key):lower()]
end

-- the extensions' OIDs, for their critical flags
local EXT = { subject_alt_name = "2.5.29.17", issuer_alt_name = "2.5.29.18", basic_constraints = "2.5.29.19",
  info_access = "1.3.6.1.5.5.7.1.1", crl_distribution_points = "2.5.29.31" }
for ext, oid in pairs(EXT) do
  M["get_" .. ext .. "_critical"] = function(self)
    for _, c in ipairs(self.info.critical) do if c == oid then return true end end
    return false
  end
end

function M:get_signature_name() return self.info.signature.sn end
function M:get_signature_nid() return self.info.signature.nid end
function M:get_signature_digest_name() return self.info.signature.md end

local function urls(list, all)
  if #list == 0 then return nil end
  if all then return list end
  return list[1]
end
function M:get_ocsp_url(all) return urls(self.info.ocsp, all) end
function M:get_crl_url(all) return urls(self.info.crl, all) end

function M:digest(alg)
  local d, err = digest.new(alg or "sha1")
  if not d then return nil, err end
  return d:final(self.info.der)
end

function M:pubkey_digest(alg)
  local d, err = digest.new(alg or "sha1")
  if not d then return nil, err end
  return d:final(self.info.pubkey_bits)
end

function M:verify(key)
  if not pkey.istype(key) then return nil, "x509:verify: expect a pkey instance at #1" end
  local pub = key:to_PEM("public")
  local spki = pkey.new(pub, { format = "PEM", type = "pu" })
  if H("ossl_x509_verify", self.info.der, spki.der) then return true end
  return false, "x509:verify: the certificate's signature does not match the key"
end

function M:check_private_key(key)
  if not pkey.istype(key) then return nil, "x509:check_private_key: expect a pkey instance at #1" end
  if not key:is_private() then return nil, "x509:check_private_key: expect a private key" end
  return H("ossl_x509_check_private_key", self.info.der, key.der)
end

function M:tostring(fmt)
  fmt = fmt and tostring(fmt):upper() or "PEM"
  if fmt == "PEM" then return self.info.pem end
  if fmt == "DER" then return self.info.der end
  return nil, "x509:tostring: can only write PEM or DER format, not " .. fmt
end
function M:to_PEM() return self.info.pem end

-- what makes or changes a certificate
for _, what in ipairs({ "sign", "add_extension", "set_extension", "get_extension", "set_extension_critical",
  "get_extension_critical", "set_lifetime" }) do
  M[what] = function() return unwritten(":" .. what) end
end
for _, attr in ipairs({ "issuer_name", "not_before", "not_after", "pubkey", "serial_number", "subject_name",
  "version", "subject_alt_name", "issuer_alt_name", "basic_constraints", "info_access", "crl_distribution_points" }) do
  M["set_" .. attr] = function() return unwritten(":set_" .. attr) end
end
for _, ext in ipairs({ "issuer_alt_name", "info_access", "crl_distribution_points" }) do
  M["get_" .. ext] = function() return unwritten(":get_" .. ext) end
end

return M
