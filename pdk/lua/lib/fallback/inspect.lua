-- `inspect(value)`, broker's own stand-in for the inspect rock Kong's test plugins require: a
-- readable, stable rendering of a value (tables with sorted keys, cycles shown as <cycle>).
local function key_order(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return ta < tb end
  if ta == "number" or ta == "string" then return a < b end
  return tostring(a) < tostring(b)
end

local function render(v, depth, seen, max_depth)
  local t = type(v)
  if t == "string" then return string.format("%q", v) end
  if t ~= "table" then return tostring(v) end
  if seen[v] then return "<cycle>" end
  if max_depth and depth >= max_depth then return "{...}" end
  seen[v] = true
  local parts, n = {}, #v
  for i = 1, n do parts[#parts + 1] = render(v[i], depth + 1, seen, max_depth) end
  local keys = {}
  for k in pairs(v) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, key_order)
  for _, k in ipairs(keys) do
    local name = type(k) == "string" and k:match("^[%a_][%w_]*$") and k or ("[" .. render(k, depth + 1, seen, max_depth) .. "]")
    parts[#parts + 1] = name .. " = " .. render(v[k], depth + 1, seen, max_depth)
  end
  seen[v] = nil
  return "{ " .. table.concat(parts, ", ") .. " }"
end

return setmetatable({}, { __call = function(_, value, options)
  return render(value, 0, {}, options and options.depth)
end })
