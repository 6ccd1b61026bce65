-- resty.ada (lua-resty-ada, Kong's binding of the ada URL parser), written for broker from the
-- library's documented API on Node's URL, which is ada (WHATWG URL): parse(url) gives a URL object
-- or nil, "invalid url"; its get_* / has_* read a component, its set_* / clear_* change one and
-- return the object (set_* answer nil, "unable to set <part>" when the URL refuses the value, as
-- ada's do). A URL is kept as its href; an argument of the wrong type raises, as the library's asserts.
local H = __host
local search = require "resty.ada.search"

local M = { _VERSION = "1.1.0" }
local mt = { _VERSION = M._VERSION }
mt.__index = mt

local function new(href) return setmetatable({ href = href }, mt) end

local GETS = { "href", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search",
  "hash", "origin", "scheme_type", "host_type" }
for _, part in ipairs(GETS) do
  mt["get_" .. part] = function(self) return (H("ada_get", self.href, part)) end
end

local HAS = { "credentials", "non_empty_username", "password", "non_empty_password", "hostname", "empty_hostname",
  "port", "search", "hash" }
for _, what in ipairs(HAS) do
  mt["has_" .. what] = function(self) return (H("ada_get", self.href, "has_" .. what)) end
end

-- set_search and set_hash never fail in ada; the others answer nil, err when the URL refuses the value
local SETS = { href = true, protocol = true, username = true, password = true, host = true, hostname = true,
  port = true, pathname = true, search = false, hash = false }
local ASSERT = { search = "invalid query" }
for part, can_fail in pairs(SETS) do
  mt["set_" .. part] = function(self, value)
    if part == "port" and type(value) == "number" then value = string.format("%d", value) end
    if type(value) ~= "string" then error(ASSERT[part] or ("invalid " .. part), 0) end
    local href = H("ada_set", self.href, part, value)
    if not href then
      if can_fail then return nil, "unable to set " .. part end
      return self
    end
    self.href = href
    return self
  end
end

for _, part in ipairs({ "port", "search", "hash" }) do
  mt["clear_" .. part] = function(self)
    self.href = H("ada_clear", self.href, part)
    return self
  end
end

-- the query helpers of a URL work on its search through resty.ada.search
local function query(self) return self:get_search() or "" end
function mt:search_parse() return search.parse(query(self)) end
for _, name in ipairs({ "has", "has_value", "get", "get_all", "size" }) do
  mt["search_" .. name] = function(self, ...) return search[name](query(self), ...) end
end
for _, name in ipairs({ "set", "append", "remove", "remove_value", "sort" }) do
  mt["search_" .. name] = function(self, ...)
    self:set_search(search[name](query(self), ...))
    return self
  end
end

mt.tostring = mt.get_href
mt.__tostring = mt.get_href
function mt:__len() return #self:get_href() end
function mt:free() setmetatable(self, nil) self.href = nil end

--- A URL object, or nil, "invalid url".
function M.parse(url)
  if type(url) ~= "string" then error("invalid url", 0) end
  local href = H("ada_parse", url)
  if not href then return nil, "invalid url" end
  return new(href)
end

--- A URL object for `url` resolved against `base`, or nil, "invalid url or base".
function M.parse_with_base(url, base)
  if type(url) ~= "string" then error("invalid url", 0) end
  if type(base) ~= "string" then error("invalid base", 0) end
  local href = H("ada_parse", url, base)
  if not href then return nil, "invalid url or base" end
  return new(href)
end

function M.can_parse(url)
  if type(url) ~= "string" then error("invalid url", 0) end
  return H("ada_parse", url) ~= nil
end

function M.can_parse_with_base(url, base)
  if type(url) ~= "string" then error("invalid url", 0) end
  if type(base) ~= "string" then error("invalid base", 0) end
  return H("ada_parse", url, base) ~= nil
end

function M.idna_to_ascii(domain)
  if type(domain) ~= "string" then error("invalid domain", 0) end
  return (H("ada_idna", domain, "ascii"))
end

function M.idna_to_unicode(domain)
  if type(domain) ~= "string" then error("invalid domain", 0) end
  return (H("ada_idna", domain, "unicode"))
end

-- the static API: ada.get_href(url), ada.clear_port(url), ada.search_get(url, key) … parse the
-- string each time; a method that returns the URL gives its href
for name, fn in pairs(mt) do
  if type(fn) == "function" and not name:find("^__") and name ~= "free" and name ~= "search_parse" then
    M[name] = function(url, ...)
      local u, err = M.parse(url)
      if not u then return nil, err end
      local r, e = fn(u, ...)
      if r == u then return u:get_href() end
      return r, e
    end
  end
end

return M
