-- The session cookie's layout and its crypto, for broker's resty.session (written for broker from
-- lua-resty-session 4's documented cookie format; nothing else knows the layout).
--
--   HEADER (82 bytes, 110 in base64url):
--   [ type 1 | flags 2 | sid 32 | created at 5 | rolling offset 4 | size 3 | tag 16 | idling offset 3 | mac 16 ]
--   PAYLOAD: the session's JSON sealed with AES-256-GCM (its length is `size`)
--
-- Integers are little endian. The AEAD's associated data is the header's first 47 bytes (type to size), so
-- a touch (a new idling offset) needs no new seal; the MAC is HMAC-SHA256 over the first 66 bytes (and the
-- values the session is bound to), cut to 16 bytes. Keys come from the initial keying material (SHA-256 of
-- the secret): HKDF-SHA256 extract once, then expand with "encryption:<sid>" (32 key bytes and a 12 byte
-- iv) and "authentication:<sid>" (32 bytes); a remember cookie's encryption key is PBKDF2-SHA256 instead,
-- its iterations by `remember_safety`.
local cipher = require "resty.openssl.cipher"
local kdf = require "resty.openssl.kdf"
local hmac = require "resty.openssl.hmac"
local digest = require "resty.openssl.digest"
local rand = require "resty.openssl.rand"
local b64 = require "ngx.base64"

local spack, sunpack, sub, byte = string.pack, string.unpack, string.sub, string.byte

local M = {
  TYPE = 1,
  HEADER_SIZE = 82,
  HEADER_B64_SIZE = 110,
  SID_SIZE = 32,
  FLAG_REMEMBER = 0x0001,
  -- the largest values the header's fields hold
  MAX_CREATED_AT = 2 ^ 40 - 1,
  MAX_ROLLING_OFFSET = 2 ^ 32 - 1,
  MAX_SIZE = 2 ^ 24 - 1,
  MAX_IDLING_OFFSET = 2 ^ 24 - 1,
}

local LAYOUT = "<I1I2c32I5I4I3c16I3c16"
local ITERATIONS = { Low = 1000, Medium = 10000, High = 100000, ["Very High"] = 1000000 }

--- the iterations a remember_safety names (nil for "None": HKDF as a session cookie); false for an unknown name
function M.iterations(safety)
  if safety == nil then return ITERATIONS.Medium end
  if safety == "None" then return nil end
  return ITERATIONS[safety] or false
end

--- SHA-256 of a secret: the initial keying material
function M.ikm_of(secret)
  return assert(digest.new("sha256")):final(secret)
end

--- 32 random bytes (a session id, or the key material of a library given no secret)
function M.random(n)
  return rand.bytes(n or M.SID_SIZE)
end

-- HKDF's extract step, once per keying material: the map holds one entry per secret a run configures
local prk_of = {}
local function prk(ikm)
  local k = prk_of[ikm]
  if not k then
    k = assert(kdf.derive({ type = kdf.HKDF, md = "sha256", hkdf_key = ikm, salt = "", hkdf_info = "",
      hkdf_mode = kdf.HKDEF_MODE_EXTRACT_ONLY, outlen = 32 }))
    prk_of[ikm] = k
  end
  return k
end

local function expand(ikm, info, outlen)
  return assert(kdf.derive({ type = kdf.HKDF, md = "sha256", hkdf_key = prk(ikm), salt = "", hkdf_info = info,
    hkdf_mode = kdf.HKDEF_MODE_EXPAND_ONLY, outlen = outlen }))
end

--- the AES key and iv of a session id: HKDF, or PBKDF2 with `iterations` (a remember cookie)
local function encryption_key(ikm, sid, iterations)
  local out
  if iterations then
    out = assert(kdf.derive({ type = kdf.PBKDF2, md = "sha256", pass = prk(ikm), salt = "encryption:" .. sid,
      pbkdf2_iter = iterations, outlen = 44 }))
  else
    out = expand(ikm, "encryption:" .. sid, 44)
  end
  return sub(out, 1, 32), sub(out, 33, 44)
end

--- the header as a table of its fields
function M.unpack(bin)
  if type(bin) ~= "string" or #bin ~= M.HEADER_SIZE then return nil, "invalid session header" end
  local typ, flags, sid, created_at, rolling_offset, size, tag, idling_offset, mac = sunpack(LAYOUT, bin)
  return { type = typ, flags = flags, sid = sid, created_at = created_at, rolling_offset = rolling_offset,
    size = size, tag = tag, idling_offset = idling_offset, mac = mac }
end

local function packed(h, mac)
  return spack(LAYOUT, h.type, h.flags, h.sid, h.created_at, h.rolling_offset, h.size, h.tag, h.idling_offset,
    mac or string.rep("\0", 16))
end

local function mac_of(ikm, h, bound)
  local key = expand(ikm, "authentication:" .. h.sid, 32)
  local msg = sub(packed(h), 1, 66) .. (bound or "")
  return sub(assert(hmac.new(key, "sha256")):final(msg), 1, 16)
end

-- compares every byte, whatever the first difference, so the time taken tells nothing of the MAC
local function same(a, b)
  if #a ~= #b then return false end
  local diff = 0
  for i = 1, #a do
    if byte(a, i) ~= byte(b, i) then diff = diff + 1 end
  end
  return diff == 0
end

--- seals the JSON payload and returns the header (binary) and the ciphertext. h: flags, sid, created_at,
--- rolling_offset, idling_offset; its type, size and tag are filled in.
function M.seal(ikm, h, plaintext, bound, iterations)
  if #plaintext > M.MAX_SIZE then return nil, nil, "session data is too large" end
  h.type = M.TYPE
  h.size = #plaintext
  h.tag = string.rep("\0", 16)
  local key, iv = encryption_key(ikm, h.sid, iterations)
  local c = assert(cipher.new("aes-256-gcm"))
  local ciphertext, err = c:encrypt(key, iv, plaintext, false, sub(packed(h), 1, 47))
  if not ciphertext then return nil, nil, "unable to encrypt session data: " .. tostring(err) end
  h.tag = assert(c:get_aead_tag(16))
  return packed(h, mac_of(ikm, h, bound)), ciphertext
end

--- the header again with a new idling offset (a touch): the seal is unchanged, the MAC made anew
function M.retouch(ikm, h, bound)
  return packed(h, mac_of(ikm, h, bound))
end

--- which of the keying materials (the secret's, then its fallbacks) made the header's MAC: ikm, or nil, err
function M.authenticate(ikms, h, bound)
  if h.type ~= M.TYPE then return nil, "invalid session type" end
  for _, ikm in ipairs(ikms) do
    if same(mac_of(ikm, h, bound), h.mac) then return ikm end
  end
  return nil, "invalid session message authentication code"
end

--- opens the ciphertext of an authenticated header: plaintext, or nil, err
function M.open(ikm, h, ciphertext, iterations)
  if type(ciphertext) ~= "string" or #ciphertext ~= h.size then return nil, "invalid session payload" end
  local key, iv = encryption_key(ikm, h.sid, iterations)
  local plaintext = cipher.new("aes-256-gcm"):decrypt(key, iv, ciphertext, false, sub(packed(h), 1, 47), h.tag)
  if not plaintext then return nil, "unable to decrypt session data" end
  return plaintext
end

M.encode = b64.encode_base64url
M.decode = b64.decode_base64url

return M
