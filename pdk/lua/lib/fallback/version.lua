-- `version(text)`, broker's own stand-in for the version rock Kong's spec helpers require (their
-- redis_helper compares Redis versions): a dotted version that compares part by part.
local V = {}
V.__index = V
V.__tostring = function(v) return table.concat(v.parts, ".") end
local function cmp(a, b)
  for i = 1, math.max(#a.parts, #b.parts) do
    local x, y = a.parts[i] or 0, b.parts[i] or 0
    if x ~= y then return x < y and -1 or 1 end
  end
  return 0
end
V.__eq = function(a, b) return cmp(a, b) == 0 end
V.__lt = function(a, b) return cmp(a, b) < 0 end
V.__le = function(a, b) return cmp(a, b) <= 0 end

local function new(text)
  if getmetatable(text) == V then return text end
  local parts = {}
  for n in tostring(text):gmatch("%d+") do parts[#parts + 1] = tonumber(n) end
  if #parts == 0 then return nil, "invalid version: " .. tostring(text) end
  return setmetatable({ parts = parts }, V)
end

return setmetatable({ new = new }, { __call = function(_, text) return new(text) end })
