-- One of a session's cookies for broker's resty.session: read (its header authenticated and in time, its
-- data opened from the cookie or the storage), written (sealed under a new session id, stored or put in the
-- cookie) and removed. `self` is the session instance (its conf, data and headers).
local codec = require "broker.session_codec"
local http = require "broker.session_http"
local cjson = require "cjson.safe"

local min = math.min

local M = {}

local function sha256(s) return require("resty.openssl.digest").new("sha256"):final(s) end

-- the key a storage keeps the data under: the session id (Session-Id), or its digest with hash_storage_key
local function storage_key(c, sid)
  if c.hash_storage_key then return codec.encode(sha256(sid)) end
  return codec.encode(sid)
end

--- seconds left of the idling, rolling and absolute timeouts (nil where one is disabled)
function M.left(self, h, remember, now)
  local c = self.conf
  local idling = remember and 0 or c.idling_timeout
  local rolling = remember and c.remember_rolling_timeout or c.rolling_timeout
  local absolute = remember and c.remember_absolute_timeout or c.absolute_timeout
  local base = h.created_at + h.rolling_offset
  return idling > 0 and base + h.idling_offset + idling - now or nil,
    rolling > 0 and base + rolling - now or nil,
    absolute > 0 and h.created_at + absolute - now or nil
end

--- the smallest of the values given that are not nil
function M.soonest(...)
  local out
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if v then out = out and min(out, v) or v end
  end
  return out
end

--- a cookie's header, authenticated and in time: the header, the ikm that made its MAC, the cookie; or nil, err
function M.header_of(self, remember)
  local c = self.conf
  local value = http.cookie(remember and c.remember_name or c.name)
  if not value then return nil, "missing session cookie" end
  local h, err = codec.unpack(codec.decode(value:sub(1, codec.HEADER_B64_SIZE)))
  if not h then return nil, err end
  if ((h.flags & codec.FLAG_REMEMBER) ~= 0) ~= remember then return nil, "invalid session cookie flags" end
  local ikm
  ikm, err = codec.authenticate(c.ikms, h, http.bound(c.bind))
  if not ikm then return nil, err end
  local idle, rolling, absolute = M.left(self, h, remember, ngx.time())
  if idle and idle <= 0 then return nil, "session idling timeout exceeded" end
  if rolling and rolling <= 0 then return nil, "session rolling timeout exceeded" end
  if absolute and absolute <= 0 then return nil, "session absolute timeout exceeded" end
  return h, ikm, value
end

--- one of the session's cookies opened: its header, ikm, data and payload (base64url); or nil, err
function M.read(self, remember)
  local c = self.conf
  local h, ikm, value = M.header_of(self, remember)
  if not h then return nil, ikm end
  local payload, err
  if c.store then
    payload, err = c.store:get(remember and c.remember_name or c.name, storage_key(c, h.sid), ngx.time())
    if not payload then return nil, "session data not found" .. (err and " (" .. tostring(err) .. ")" or "") end
  else
    payload = value:sub(codec.HEADER_B64_SIZE + 1)
  end
  local plaintext
  plaintext, err = codec.open(ikm, h, codec.decode(payload), remember and codec.iterations(c.remember_safety))
  if not plaintext then return nil, err end
  local data = cjson.decode(plaintext)
  if type(data) ~= "table" then return nil, "invalid session data" end
  return h, ikm, data, payload
end


-- the audiences and subjects a storage may keep beside the data (store_metadata), base64url as stored
local function metadata(self)
  local c = self.conf
  if not c.store_metadata then return nil end
  local audiences, subjects = {}, {}
  for _, e in ipairs(self.data) do
    if e.s ~= nil then
      audiences[#audiences + 1] = codec.encode(e.a)
      subjects[#subjects + 1] = codec.encode(c.hash_subject and sha256(e.s):sub(1, 16) or e.s)
    end
  end
  return { audiences = audiences, subjects = subjects }
end

--- seals the data under a new session id, stores it or puts it in the cookie, and sets the cookie; `previous`
--- (the header this one replaces) keeps the creation time: the header, the ikm and the payload; or nil, err
function M.write(self, remember, previous, now)
  local c = self.conf
  local name = remember and c.remember_name or c.name
  local created_at = previous and previous.created_at or now
  local h = { flags = remember and codec.FLAG_REMEMBER or 0, sid = codec.random(), created_at = created_at,
    rolling_offset = min(now - created_at, codec.MAX_ROLLING_OFFSET), idling_offset = 0 }
  local ikm = c.ikms[1]
  local bin, ct, err = codec.seal(ikm, h, assert(cjson.encode(self.data)), http.bound(c.bind),
    remember and codec.iterations(c.remember_safety))
  if not bin then return nil, err end
  local _, rolling, absolute = M.left(self, h, remember, now)
  local ttl = M.soonest(rolling, absolute)
  local payload, value = codec.encode(ct), codec.encode(bin)
  if c.store then
    local ok
    ok, err = c.store:set(name, storage_key(c, h.sid), payload, ttl or 0, now,
      previous and storage_key(c, previous.sid), c.stale_ttl, metadata(self), remember)
    if not ok then return nil, err or "unable to store session data" end
  else
    value = value .. payload
  end
  if #name + #value > 4096 then return nil, "session cookie is larger than 4096 bytes (broker does not chunk cookies)" end
  http.set_cookie(c, name, value, remember and ttl or nil)
  return h, ikm, payload
end

--- removes one of the session's cookies, and its stored data
function M.remove(self, remember, h)
  local c = self.conf
  local name = remember and c.remember_name or c.name
  if c.store and h then
    local ok, err = c.store:delete(name, storage_key(c, h.sid), ngx.time(), metadata(self))
    if not ok and err then return nil, err end
  end
  http.set_cookie(c, name, "", 0)
  return true
end

return M
