-- `multipart(body, content_type)`, the interface of the lua-multipart rock Kong bundles (written for
-- broker from its README): the parts of a multipart/form-data body by name, changed and written back.
-- request-transformer rewrites form bodies with it; a lua-multipart on the Lua path (a root, --lua-path) wins.
local Multipart = {}
Multipart.__index = Multipart

local function boundary_of(content_type)
  if type(content_type) ~= "string" then return nil end
  return content_type:match('boundary="([^"]+)"') or content_type:match("boundary=([^;%s]+)")
end

local function parse_part(raw)
  local head, value = raw:match("^(.-)\r\n\r\n(.*)$")
  if not head then return nil end
  local headers = {}
  for line in head:gmatch("[^\r\n]+") do headers[#headers + 1] = line end
  local disposition = ""
  for _, h in ipairs(headers) do
    if h:lower():find("^content%-disposition:") then disposition = h end
  end
  local name = disposition:match('name="([^"]*)"')
  if not name then return nil end
  return { name = name, headers = headers, value = value }
end

local function new(body, content_type)
  local self = setmetatable({ boundary = boundary_of(content_type) or "broker-multipart", parts = {} }, Multipart)
  body = body or ""
  local delimiter = "--" .. self.boundary
  local at = body:find(delimiter, 1, true)
  while at do
    local from = at + #delimiter
    if body:sub(from, from + 1) == "--" then break end
    local next_at = body:find("\r\n" .. delimiter, from, true)
    local raw = body:sub(from + 2, (next_at or #body + 1) - 1)
    local part = parse_part(raw)
    if part then self.parts[#self.parts + 1] = part end
    at = next_at and next_at + 2 or nil
  end
  return self
end

--- The first part named `name` ({ name, value, headers }), or nil.
function Multipart:get(name)
  for _, p in ipairs(self.parts) do if p.name == name then return p end end
end

--- Every part's value by name (the last one of a repeated name).
function Multipart:get_all()
  local out = {}
  for _, p in ipairs(self.parts) do out[p.name] = p.value end
  return out
end

--- Every part's value by name, a repeated name's values as an array.
function Multipart:get_all_with_arrays()
  local out = {}
  for _, p in ipairs(self.parts) do
    local had = out[p.name]
    if had == nil then out[p.name] = p.value
    elseif type(had) == "table" then had[#had + 1] = p.value
    else out[p.name] = { had, p.value } end
  end
  return out
end

--- The values of the parts named `name`, in order.
function Multipart:get_as_array(name)
  local out = {}
  for _, p in ipairs(self.parts) do if p.name == name then out[#out + 1] = p.value end end
  return out
end

--- Sets the first part named `name` to `value`, or adds one.
function Multipart:set_simple(name, value, filename, content_type)
  local disposition = 'Content-Disposition: form-data; name="' .. name .. '"'
    .. (filename and ('; filename="' .. filename .. '"') or "")
  local headers = { disposition }
  if content_type then headers[2] = "Content-Type: " .. content_type end
  local part = self:get(name)
  if part then
    part.value, part.headers = tostring(value), headers
  else
    self.parts[#self.parts + 1] = { name = name, value = tostring(value), headers = headers }
  end
end

--- Removes every part named `name`.
function Multipart:delete(name)
  for i = #self.parts, 1, -1 do
    if self.parts[i].name == name then table.remove(self.parts, i) end
  end
end

--- The body with its parts as they stand now.
function Multipart:tostring()
  local out = {}
  for _, p in ipairs(self.parts) do
    out[#out + 1] = "--" .. self.boundary .. "\r\n" .. table.concat(p.headers, "\r\n") .. "\r\n\r\n" .. p.value .. "\r\n"
  end
  out[#out + 1] = "--" .. self.boundary .. "--\r\n"
  return table.concat(out)
end

return setmetatable({ new = new }, { __call = function(_, body, content_type) return new(body, content_type) end })
