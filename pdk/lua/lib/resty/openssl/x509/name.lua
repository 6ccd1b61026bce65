-- resty.openssl.x509.name (written for broker from lua-resty-openssl's documented API): an X.509 name as
-- ordered entries { id, nid, sn, ln, blob }: new, add, find, tostring, all, each, #name, pairs(name), name[i]
-- (the i-th entry).
local M = {}
local mt = { __name = "resty.openssl.x509.name" }

-- the attribute types names use: short name, OID, NID, long name
local TYPES = {
  { "CN", "2.5.4.3", 13, "commonName" }, { "C", "2.5.4.6", 14, "countryName" },
  { "L", "2.5.4.7", 15, "localityName" }, { "ST", "2.5.4.8", 16, "stateOrProvinceName" },
  { "O", "2.5.4.10", 17, "organizationName" }, { "OU", "2.5.4.11", 18, "organizationalUnitName" },
  { "emailAddress", "1.2.840.113549.1.9.1", 48, "emailAddress" }, { "serialNumber", "2.5.4.5", 105, "serialNumber" },
  { "title", "2.5.4.12", 106, "title" }, { "GN", "2.5.4.42", 99, "givenName" }, { "SN", "2.5.4.4", 100, "surname" },
  { "DC", "0.9.2342.19200300.100.1.25", 391, "domainComponent" }, { "UID", "0.9.2342.19200300.100.1.1", 458, "userId" },
  { "street", "2.5.4.9", 660, "streetAddress" }, { "postalCode", "2.5.4.17", 661, "postalCode" },
}
local BY = {}
for _, t in ipairs(TYPES) do
  local entry = { sn = t[1], id = t[2], nid = t[3], ln = t[4] }
  BY[t[1]], BY[t[2]], BY[t[4]], BY[t[3]] = entry, entry, entry, entry
end

local function object(kind, blob)
  local t = BY[kind] or { sn = kind, id = kind, ln = kind }
  return { id = t.id, nid = t.nid, sn = t.sn, ln = t.ln, blob = blob }
end

function M.new() return setmetatable({ entries = {} }, mt) end
function M.istype(v) return getmetatable(v) == mt end

--- A name from [[short name, value], ...] (resty.openssl.x509 reads certificates' names so).
function M._from(list)
  local n = M.new()
  for _, e in ipairs(list) do n.entries[#n.entries + 1] = object(e[1], e[2]) end
  return n
end

function M:add(nid, txt)
  if type(nid) ~= "string" or not BY[nid] then return nil, "x509.name:add: invalid NID text " .. tostring(nid) end
  if type(txt) ~= "string" then return nil, "x509.name:add: expect a string at #2" end
  self.entries[#self.entries + 1] = object(BY[nid].sn, txt)
  return self
end

function M:find(nid, last_pos)
  local t = BY[nid]
  if not t then return nil, nil, "x509.name:find: invalid NID text " .. tostring(nid) end
  for i = (last_pos or 0) + 1, #self.entries do
    local e = self.entries[i]
    if e.sn == t.sn then return e, i end
  end
  return nil
end

local function iter(self)
  local i = 0
  return function()
    i = i + 1
    local e = self.entries[i]
    if e then return e.sn or e.ln or e.id, e end
  end
end

function M:each() return iter(self) end
function M:all()
  local out = {}
  for k, e in iter(self) do out[k] = e end
  return out
end
function M:count() return #self.entries end

-- OpenSSL's one-line form as the library writes it: KEY=value pairs, sorted, `/`-joined
function M:tostring()
  local values = {}
  for k, e in iter(self) do values[#values + 1] = k .. "=" .. e.blob end
  table.sort(values)
  return table.concat(values, "/")
end

mt.__index = function(self, k)
  if type(k) == "number" then
    return self.entries[k]
  end
  return M[k]
end
mt.__pairs = iter
mt.__len = function(self) return #self.entries end
mt.__tostring = M.tostring

return M
