-- resty.openssl.x509.altname (written for broker from lua-resty-openssl's documented API): the subject (or
-- issuer) alternative names as ordered { type, value } pairs, types as the library names them (DNS, IP, URI,
-- email, DirName): new, add, all, each, count, #altname, pairs(altname), altname[i] (a { type, value } pair).
local M = {}
local mt = { __name = "resty.openssl.x509.altname" }
local TYPES = { dns = "DNS", ip = "IP", uri = "URI", email = "email", rfc822name = "email", rfc822 = "email",
  dirname = "DirName" }

function M.new() return setmetatable({ names = {} }, mt) end
function M.istype(v) return getmetatable(v) == mt end

--- An altname from [[type, value], ...] (resty.openssl.x509 reads certificates' names so).
function M._from(list)
  local a = M.new()
  for _, e in ipairs(list) do a.names[#a.names + 1] = { e[1], e[2] } end
  return a
end

function M:add(typ, value)
  if type(typ) ~= "string" then return nil, "x509.altname:gn_set: expect a string at #1" end
  if type(value) ~= "string" then return nil, "x509.altname:gn_set: except a string at #2" end
  local t = TYPES[typ:lower()]
  if not t then return nil, "x509.altname:gn_set: unknown type " .. typ end
  self.names[#self.names + 1] = { t, value }
  return self
end

local function iter(self)
  local i = 0
  return function()
    i = i + 1
    local e = self.names[i]
    if e then return e[1], e[2] end
  end
end

function M:each() return iter(self) end
function M:all()
  local out = {}
  for k, v in iter(self) do out[k] = v end
  return out
end
function M:count() return #self.names end

function M:tostring()
  local out = {}
  for k, v in iter(self) do out[#out + 1] = k .. "=" .. tostring(v) end
  return table.concat(out, "/")
end

mt.__index = function(self, k)
  if type(k) == "number" then
    local e = self.names[k]
    return e and { e[1], e[2] }
  end
  return M[k]
end
mt.__pairs = iter
mt.__len = function(self) return #self.names end
mt.__tostring = M.tostring

return M
