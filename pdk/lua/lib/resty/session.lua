-- resty.session (lua-resty-session 4), written for broker from the library's documented API and cookie
-- format: init, new, open, start, logout, destroy; instances with open, save, touch, refresh, logout,
-- destroy, close, data and audience accessors, get_property, clear_request_cookie and the Session-*
-- headers. Sessions are sealed with AES-256-GCM and their header MACed (broker/session_codec.lua), each
-- cookie read and written by broker/session_cookie.lua; data lives in the cookie or in a storage table
-- (Kong's `kong.plugins.session.storage.kong`) or module. The library's own server storages (redis,
-- postgres, shm …) are not emulated, and data is never deflated.
local codec = require "broker.session_codec"
local http = require "broker.session_http"
local cookie = require "broker.session_cookie"

local min = math.min

local DEFAULTS = {
  cookie_name = "session", cookie_path = "/", cookie_http_only = true, cookie_same_site = "Lax",
  remember = false, remember_safety = "Medium", remember_cookie_name = "remember", audience = "default",
  enforce_same_subject = false, stale_ttl = 10, idling_timeout = 900, rolling_timeout = 3600,
  absolute_timeout = 86400, remember_rolling_timeout = 604800, remember_absolute_timeout = 2592000,
  hash_storage_key = false, hash_subject = false, store_metadata = false, touch_threshold = 60,
  compression_threshold = 1024,
}
local NUMBERS = { "stale_ttl", "idling_timeout", "rolling_timeout", "absolute_timeout", "remember_rolling_timeout",
  "remember_absolute_timeout", "touch_threshold", "compression_threshold" }
local SAME_SITE = { Lax = true, Strict = true, None = true, Default = true }
local PREFIXES = { ["__Host-"] = true, ["__Secure-"] = true }
local LIBRARY_STORAGES = { dshm = true, file = true, memcached = true, mysql = true, postgres = true, redis = true,
  shm = true }

local globals = {}
local random_ikm -- a library given neither secret nor ikm keys its sessions with bytes of its own, per worker

local function bad(msg) error("resty.session: " .. msg, 4) end

local function storage_of(c)
  local s = c.storage
  if s == nil or s == false or s == "cookie" then return nil end
  if type(s) == "table" then return s end
  if type(s) ~= "string" then bad("invalid storage (a name or a table)") end
  if LIBRARY_STORAGES[s] then
    bad("storage \"" .. s .. "\" is not emulated by broker: use the cookie storage or a storage table of your own")
  end
  local ok, mod = pcall(require, s)
  if not ok or type(mod) ~= "table" or type(mod.new) ~= "function" then
    bad("storage \"" .. s .. "\" could not be loaded as a module with new(configuration)")
  end
  return mod.new(c[s])
end

-- the configuration: the defaults, init's, then the caller's; checked once
local function configure(conf)
  if conf ~= nil and type(conf) ~= "table" then bad("configuration must be a table") end
  local c = {}
  for k, v in pairs(DEFAULTS) do c[k] = v end
  for k, v in pairs(globals) do c[k] = v end
  for k, v in pairs(conf or {}) do c[k] = v end
  for _, k in ipairs(NUMBERS) do
    if type(c[k]) ~= "number" or c[k] < 0 then bad(k .. " must be a non-negative number") end
  end
  if c.cookie_same_site ~= nil and not SAME_SITE[c.cookie_same_site] then
    bad("invalid cookie_same_site \"" .. tostring(c.cookie_same_site) .. "\" (Lax, Strict, None or Default)")
  end
  if c.cookie_prefix ~= nil and not PREFIXES[c.cookie_prefix] then
    bad("invalid cookie_prefix \"" .. tostring(c.cookie_prefix) .. "\" (__Host- or __Secure-)")
  end
  if codec.iterations(c.remember_safety) == false then
    bad("invalid remember_safety \"" .. tostring(c.remember_safety) .. "\" (None, Low, Medium, High, Very High)")
  end
  if c.ikm ~= nil and (type(c.ikm) ~= "string" or #c.ikm ~= 32) then bad("ikm must be 32 bytes") end
  if c.secret ~= nil and type(c.secret) ~= "string" then bad("secret must be a string") end
  local ikms = {}
  if c.ikm then ikms[1] = c.ikm elseif c.secret then ikms[1] = codec.ikm_of(c.secret) end
  for _, s in ipairs(c.ikm_fallbacks or {}) do ikms[#ikms + 1] = s end
  for _, s in ipairs(c.secret_fallbacks or {}) do ikms[#ikms + 1] = codec.ikm_of(s) end
  if not ikms[1] then
    random_ikm = random_ikm or codec.random(32)
    ikms[1] = random_ikm
  end
  c.ikms = ikms
  c.name = (c.cookie_prefix or "") .. c.cookie_name
  c.remember_name = (c.cookie_prefix or "") .. c.remember_cookie_name
  c.store = storage_of(c)
  return c
end

local S = {}
local mt = { __index = S }

local function entry(self) return self.data[self.index] end

local function closed(self, what)
  if self.state == "closed" then return nil, "unable to " .. what .. " closed session" end
  return true
end

--- opens the session from its cookie, or from the remember cookie when remember is on: true, or nil, err
function S:open()
  local ok, err = closed(self, "open")
  if not ok then return nil, err end
  local c = self.conf
  local h, ikm, data, payload = cookie.read(self, false)
  local remembered = false
  if not h then
    err = ikm
    if not c.remember then return nil, err end
    local rh, rikm, rdata = cookie.read(self, true)
    -- with no session cookie, why the remember cookie did not open is the news
    if not rh then return nil, (err == "missing session cookie" and rikm or err) end
    self.remember_header, ikm, data, remembered = rh, rikm, rdata, true
  elseif c.remember then
    self.remember_header = cookie.header_of(self, true) or nil
  end
  for i, e in ipairs(data) do
    if type(e) == "table" and e.a == c.audience then
      self.header, self.ikm, self.data, self.index, self.payload = h, ikm, data, i, payload
      self.remembered, self.state = remembered, "open"
      return true
    end
  end
  -- the cookie holds other audiences only: they are kept, so that a save does not drop them
  data[#data + 1] = { d = {}, a = c.audience, s = c.subject }
  self.header, self.ikm, self.data, self.index, self.payload = h, ikm, data, #data, payload
  self.remembered = remembered
  return nil, "missing session audience"
end

--- saves the data under a new session id and sends the cookie(s): true, or nil, err
function S:save()
  local ok, err = closed(self, "save")
  if not ok then return nil, err end
  local c, now = self.conf, ngx.time()
  if c.enforce_same_subject and entry(self) then
    local subject, kept = entry(self).s, {}
    for _, e in ipairs(self.data) do
      if e.s == subject then kept[#kept + 1] = e end
    end
    for i, e in ipairs(kept) do
      if e == entry(self) then self.index = i end
    end
    self.data = kept
  end
  local h, ikm, payload = cookie.write(self, false, not self.remembered and self.header or nil, now)
  if not h then return nil, ikm end
  if self.remember then
    local rh, rerr = cookie.write(self, true, self.remember_header, now)
    if not rh then return nil, rerr end
    self.remember_header = rh
  elseif self.remember_header then
    ok, err = cookie.remove(self, true, self.remember_header)
    if not ok then return nil, err end
    self.remember_header = nil
  end
  self.header, self.ikm, self.payload, self.state, self.remembered = h, ikm, payload, "open", false
  return true
end

--- sends the cookie again with a new idling offset (no new session id, no storage call): true, or nil, err
function S:touch()
  local ok, err = closed(self, "touch")
  if not ok then return nil, err end
  local h, c = self.header, self.conf
  if self.state ~= "open" or not h then return nil, "unable to touch nonexistent session" end
  local idle = ngx.time() - h.created_at - h.rolling_offset
  h.idling_offset = min(idle < 0 and 0 or idle, codec.MAX_IDLING_OFFSET)
  local value = codec.encode(codec.retouch(self.ikm, h, http.bound(c.bind)))
  http.set_cookie(c, c.name, c.store and value or value .. self.payload)
  return true
end

--- saves once 3/4 of the rolling timeout has passed (or the session came from the remember cookie, or
--- a fallback secret), touches once touch_threshold of idling has: true, or nil, err
function S:refresh()
  local ok, err = closed(self, "refresh")
  if not ok then return nil, err end
  if self.state ~= "open" then return nil, "unable to refresh nonexistent session" end
  local c, h, now = self.conf, self.header, ngx.time()
  if self.remembered or self.ikm ~= c.ikms[1] then return self:save() end
  local since = now - h.created_at - h.rolling_offset
  if c.rolling_timeout > 0 and since >= c.rolling_timeout * 3 / 4 then return self:save() end
  if c.idling_timeout > 0 and since - h.idling_offset >= c.touch_threshold then return self:touch() end
  return true
end

--- removes the data of the session's audience (saving the others), or destroys a session with no other
--- audience; the instance is closed after: true, or nil, err
function S:logout()
  local ok, err = closed(self, "logout")
  if not ok then return nil, err end
  if self.state ~= "open" then return nil, "unable to logout nonexistent session" end
  if #self.data <= 1 then return self:destroy() end
  table.remove(self.data, self.index)
  self.index = nil
  ok, err = self:save()
  self.state = "closed"
  return ok, err
end

--- removes the cookies (and stored data) of the whole session; the instance is closed after
function S:destroy()
  local ok, err = closed(self, "destroy")
  if not ok then return nil, err end
  ok, err = cookie.remove(self, false, self.header)
  if ok and (self.conf.remember or self.remember_header) then
    ok, err = cookie.remove(self, true, self.remember_header)
  end
  self.state, self.data, self.index = "closed", {}, nil
  return ok, err
end

--- closes the instance: it can no longer be used
function S:close()
  self.state, self.data, self.index = "closed", {}, nil
end

function S:get_data() local e = entry(self) return e and e.d end
function S:set_data(data)
  if type(data) ~= "table" then error("resty.session: data must be a table", 2) end
  local e = entry(self)
  if e then e.d = data end
end
function S:get(key) local e = entry(self) return e and e.d[key] end
function S:set(key, value)
  local e = entry(self)
  if e then e.d[key] = value end
end
function S:get_audience() local e = entry(self) return e and e.a end
--- switches to the audience's data when the session has it, else names the current data's audience
function S:set_audience(audience)
  for i, e in ipairs(self.data) do
    if e.a == audience then self.index = i return end
  end
  local e = entry(self)
  if e then e.a = audience end
end
function S:get_subject() local e = entry(self) return e and e.s end
function S:set_subject(subject)
  local e = entry(self)
  if e then e.s = subject end
end
function S:get_remember() return self.remember end
function S:set_remember(value) self.remember = value and true or false end

--- id, nonce, audience, subject, and the seconds left of timeout, idling-timeout, rolling-timeout, absolute-timeout
function S:get_property(name)
  local h, remember = self.header, false
  if not h then h, remember = self.remember_header, true end
  if name == "audience" then return self:get_audience() end
  if name == "subject" then return self:get_subject() end
  if not h or self.state ~= "open" then return nil end
  if name == "id" then return codec.encode(h.sid) end
  if name == "nonce" then return h.sid end
  local idle, rolling, absolute = cookie.left(self, h, remember, ngx.time())
  if name == "timeout" then return cookie.soonest(idle, rolling, absolute) end
  if name == "idling-timeout" then return idle end
  if name == "rolling-timeout" then return rolling end
  if name == "absolute-timeout" then return absolute end
  return nil
end

--- removes the session's cookies from the request the service receives
function S:clear_request_cookie()
  return http.clear_request_cookies({ self.conf.name, self.conf.remember_name })
end

local function names(conf_names, ...)
  if select("#", ...) > 0 then return { ... } end
  return conf_names or {}
end
local function property_of(self) return function(n) return self:get_property(n) end end

function S:set_request_headers(...)
  return http.set_headers(true, names(self.conf.request_headers, ...), property_of(self))
end
function S:set_response_headers(...)
  return http.set_headers(false, names(self.conf.response_headers, ...), property_of(self))
end
--- the request headers and the response headers: those named, or those configured
function S:set_headers(...)
  local ok, err = http.set_headers(true, names(self.conf.request_headers, ...), property_of(self))
  if not ok then return nil, err end
  return http.set_headers(false, names(self.conf.response_headers, ...), property_of(self))
end

-- session.info: values kept with the data (the library's server-side information store is not emulated)
local function info_of(self)
  return {
    set = function(_, k, v)
      local e = entry(self)
      if e then e.i = e.i or {} e.i[k] = v end
    end,
    get = function(_, k)
      local e = entry(self)
      return e and e.i and e.i[k]
    end,
    save = function() return self:save() end,
  }
end

local M = { _VERSION = "4.1.5" }

--- defaults for every session this worker makes afterwards
function M.init(conf)
  if conf ~= nil and type(conf) ~= "table" then error("resty.session: configuration must be a table", 2) end
  for k, v in pairs(conf or {}) do globals[k] = v end
end

function M.new(conf)
  local c = configure(conf)
  local s = setmetatable({ conf = c, data = { { d = {}, a = c.audience, s = c.subject } }, index = 1, state = "new",
    remember = c.remember and true or false }, mt)
  s.info = info_of(s)
  return s
end

--- session, err, exists
function M.open(conf)
  local s = M.new(conf)
  local ok, err = s:open()
  return s, err, ok == true
end

--- session, err, exists, refreshed
function M.start(conf)
  local s, err, exists = M.open(conf)
  if not exists then return s, err, false, false end
  local ok, rerr = s:refresh()
  return s, rerr, true, ok == true
end

-- opens the session and, when there is one, logs out or destroys it: ok, err, exists, done
local function ending(method)
  return function(conf)
    local s, err, exists = M.open(conf)
    if not exists then return nil, err, false, false end
    local ok, merr = s[method](s)
    return ok, merr, true, ok == true
  end
end
--- ok, err, exists, logged_out
M.logout = ending("logout")
--- ok, err, exists, destroyed
M.destroy = ending("destroy")

return M
