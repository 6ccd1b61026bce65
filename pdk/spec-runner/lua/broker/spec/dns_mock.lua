-- spec.helpers.dns_mock (written for broker from Kong's documented helper): records a spec gives the Kong it
-- starts (`start_kong(env, nil, nil, { dns_mock = mock })`), so names resolve as the spec says for Kong in process:
-- a plugin's resty.http and a service's host. `mocks_only` is kept; without it an unknown name is looked up as
-- before (localhost and addresses only: broker resolves no name through DNS).
local cjson = require "cjson"
local M = {}
M.__index = M

local TYPES = { A = 1, AAAA = 28, CNAME = 5, SRV = 33 }

--- A new mock; `options.mocks_only` as Kong's.
function M.new(options)
  return setmetatable({ mocks_only = options and options.mocks_only or nil, records = {} }, M)
end

local function add(self, kind, rec, required)
  if self == M then error("can't operate on the class, you must create an instance", 3) end
  if getmetatable(self or {}) ~= M then error(kind .. " method must be called using the colon notation", 3) end
  assert(type(rec) == "table", "Missing record parameter")
  for _, field in ipairs(required) do
    if rec[field] == nil then error("No " .. field .. " field in " .. kind .. " record", 3) end
  end
  local list = self.records[rec.name] or {}
  self.records[rec.name] = list
  local copy = { type = TYPES[kind], name = rec.name, ttl = rec.ttl or 600, class = rec.class or 1 }
  for k, v in pairs(rec) do if copy[k] == nil then copy[k] = v end end
  if kind == "SRV" then
    copy.weight, copy.priority = rec.weight or 10, rec.priority or 20
  end
  list[#list + 1] = copy
  return true
end

function M:A(rec) return add(self, "A", rec, { "name", "address" }) end
function M:AAAA(rec) return add(self, "AAAA", rec, { "name", "address" }) end
function M:CNAME(rec) return add(self, "CNAME", rec, { "name", "cname" }) end
function M:SRV(rec) return add(self, "SRV", rec, { "name", "target", "port" }) end

--- The address `name` resolves to (an A record first, then AAAA, through CNAMEs and SRV targets), or nil.
function M:resolve(name, depth)
  depth = depth or 0
  if depth > 8 then return nil end
  local list = self.records[name]
  if not list then return nil end
  for _, want in ipairs({ 1, 28 }) do
    for _, r in ipairs(list) do if r.type == want then return r.address end end
  end
  for _, r in ipairs(list) do
    if r.type == 5 then return self:resolve(r.cname, depth + 1) end
    if r.type == 33 then return self:resolve(r.target, depth + 1), r.port end
  end
  return nil
end

-- the records as Kong writes them to its prefix
M.__tostring = function(self)
  return cjson.encode({ mocks_only = self.mocks_only, records = self.records })
end

return M
