-- kong.tools.mime_type, whose Kong version parses with LPeg (a C module). Written for broker from
-- its documented behaviour: parse_mime_type("application/json; Charset=utf-8") gives
-- "application", "json", { charset = "utf-8" } (parameter names lower-cased), or nil, nil, nil
-- for an invalid type; includes(this, other) compares { type, subtype } tables with `*`
-- wildcards and structured-syntax suffixes (`json` includes `vnd.api+json`).
local M = {}

local TOKEN = "[%w!#%$%%&'%*%+%-%.%^_`|~]+"

local function trim(s) return (string.gsub(s, "^%s+", ""):gsub("%s+$", "")) end

function M.parse_mime_type(mime_type)
  if type(mime_type) ~= "string" then return nil, nil, nil end
  local parts = {}
  for part in string.gmatch(mime_type .. ";", "([^;]*);") do parts[#parts + 1] = trim(part) end
  local t, sub = string.match(parts[1] or "", "^(" .. TOKEN .. ")/(" .. TOKEN .. ")$")
  if not t then return nil, nil, nil end
  local params = {}
  for i = 2, #parts do
    if parts[i] ~= "" then
      local k, v = string.match(parts[i], "^(" .. TOKEN .. ")%s*=%s*(.*)$")
      if not k then return nil, nil, nil end
      v = string.match(v, '^"(.*)"$') or v
      params[string.lower(k)] = v
    end
  end
  return t, sub, params
end

function M.includes(this, other)
  if type(this) ~= "table" or type(other) ~= "table" then
    error("this and other must be tables", 2)
  end
  if this.type == "*" then return true end
  if string.lower(this.type) ~= string.lower(other.type) then return false end
  if this.subtype == "*" then return true end
  local a, b = string.lower(this.subtype), string.lower(other.subtype)
  if a == b then return true end
  -- a subtype without a suffix includes the subtypes that carry it as their suffix
  return not string.find(a, "+", 1, true) and string.sub(b, -#a - 1) == "+" .. a
end

return M
