-- kong.tools.string, for a plugin run without a Kong checkout on lua_path (Kong's own file wins when
-- one is there). Written for broker from Kong 3.x's documented behaviour.
local M = {}

--- Penlight's stringx.join: the list's strings with s between them.
function M.join(s, list) return table.concat(list, s) end

--- Penlight's stringx.split: on a plain separator (whitespace runs by default), at most n parts.
function M.split(s, sep, n)
  local parts, pos = {}, 1
  if sep == nil or sep == "" then
    for w in s:gmatch("%S+") do
      if n and #parts == n - 1 then
        parts[#parts + 1] = s:match("^%s*(.-)%s*$", (s:find(w, pos, true)))
        return parts
      end
      parts[#parts + 1] = w
      pos = (s:find(w, pos, true)) + #w
    end
    return parts
  end
  if s == "" then return parts end
  while true do
    if n and #parts == n - 1 then parts[#parts + 1] = s:sub(pos) break end
    local a, b = s:find(sep, pos, true)
    if not a then parts[#parts + 1] = s:sub(pos) break end
    parts[#parts + 1] = s:sub(pos, a - 1)
    pos = b + 1
  end
  return parts
end

--- Whitespace (space, \t … \r) trimmed on both sides; nil is "", other values their tostring.
function M.strip(value)
  if value == nil then return "" end
  if type(value) ~= "string" then value = tostring(value) or "" end
  return (value:match("^[ \t-\r]*(.-)[ \t-\r]*$"))
end

--- true, or false and the position of the first byte that is not valid UTF-8.
function M.validate_utf8(val)
  local str = tostring(val)
  local ok, pos = utf8.len(str)
  if ok then
    -- Lua 5.4 accepts surrogates and code points past U+10FFFF that Kong refuses
    for p, c in utf8.codes(str, true) do
      if (c >= 0xD800 and c <= 0xDFFF) or c > 0x10FFFF then return false, p end
    end
    return true
  end
  return false, pos
end

-- IEC units by their letter: the power of 1024 and the suffix written after the number.
local UNITS = { k = { 1, "KiB" }, m = { 2, "MiB" }, g = { 3, "GiB" } }

--- A byte count as text: as an integer without a unit (or with "b"), else in KiB, MiB or GiB with
--- `scale` decimals (2 unless given).
function M.bytes_to_str(bytes, unit, scale)
  local key = unit and unit:lower() or ""
  if key == "" or key == "b" then return ("%d"):format(bytes) end
  local u = UNITS[key]
  if not u then error("invalid unit '" .. unit .. "' (expected 'k/K', 'm/M', or 'g/G')", 2) end
  local places = scale == nil and 2 or scale
  if type(places) ~= "number" or places < 0 then error("scale must be equal or greater than 0", 2) end
  return ("%." .. places .. "f %s"):format(bytes / 1024 ^ u[1], u[2])
end

local SCALES = { k = 1024, K = 1024, m = 1024 ^ 2, M = 1024 ^ 2, g = 1024 ^ 3, G = 1024 ^ 3 }
--- nginx's sizes: "8k" → 8192.
function M.parse_ngx_size(str)
  assert(type(str) == "string", "Parameter #1 must be a string")
  local scale = SCALES[str:sub(-1)]
  local num = scale and str:sub(1, -2) or str
  local n = (tonumber(num) or 0) * (scale or 1)
  return math.type(n) == "float" and n % 1 == 0 and math.tointeger(n) or n
end

-- One value decoded from base64, or from base64url when plain base64 does not take it; nil otherwise.
local function unbase64(v)
  if type(v) ~= "string" then return nil end
  return ngx.decode_base64(v) or require("ngx.base64").decode_base64url(v)
end

--- A value decoded from base64 (or base64url) where it decodes; a list's items each on their own;
--- anything that does not decode comes back unchanged.
function M.try_decode_base64(value)
  if type(value) ~= "table" then return unbase64(value) or value end
  for i = 1, #value do value[i] = unbase64(value[i]) or value[i] end
  return value
end

function M.replace_dashes(str) return (str:gsub("%-", "_")) end
function M.replace_dashes_lower(str) return (str:lower():gsub("%-", "_")) end

return M
