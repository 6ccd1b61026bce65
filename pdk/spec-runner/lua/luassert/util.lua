-- What luassert's assertions share (written for broker): deep comparison that understands matchers,
-- the first path where two values differ, and values printed for failure messages.
local M = {}

local function is_matcher(v)
  local mt = type(v) == "table" and getmetatable(v)
  return mt and mt.__broker_matcher == true or false
end
M.is_matcher = is_matcher

--- Deep equality; a matcher on the expected side decides for its value. Returns true, or false and
-- the key path (a list) of the first difference.
function M.deep_compare(expected, actual, cycles)
  if is_matcher(expected) then return expected(actual), {} end
  if expected == actual then return true end
  if type(expected) ~= "table" or type(actual) ~= "table" then return false, {} end
  cycles = cycles or {}
  if cycles[expected] == actual then return true end
  cycles[expected] = actual
  local mt = getmetatable(expected)
  if mt and mt.__eq and mt == getmetatable(actual) and expected == actual then return true end
  for k, v in pairs(expected) do
    local same, path = M.deep_compare(v, actual[k], cycles)
    if not same then table.insert(path, 1, k) return false, path end
  end
  for k in pairs(actual) do
    if expected[k] == nil then return false, { k } end
  end
  return true
end

local function key_text(k)
  if type(k) == "string" then return "[" .. k .. "]" end
  return "[" .. tostring(k) .. "]"
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta == "number" end
    if ta == "number" or ta == "string" then return a < b end
    return tostring(a) < tostring(b)
  end)
  return keys
end

local function scalar(v)
  if type(v) == "string" then return "'" .. v .. "'" end
  return tostring(v)
end

-- a table printed over lines; `mark` is the path of a difference, whose keys get a '*'
local function dump(t, indent, mark, seen, depth)
  if seen[t] then return "<cycle>" end
  if depth > 6 then return "{ ... }" end
  seen[t] = true
  local keys = sorted_keys(t)
  if #keys == 0 then seen[t] = nil return "{ }" end
  local lines = {}
  for i, k in ipairs(keys) do
    local marked = mark and mark[1] == k
    local v = t[k]
    local text = type(v) == "table" and not is_matcher(v)
      and dump(v, indent .. "  ", marked and { table.unpack(mark, 2) } or nil, seen, depth + 1)
      or scalar(v)
    lines[i] = indent .. (marked and "*" or " ") .. key_text(k) .. " = " .. text
  end
  seen[t] = nil
  return "{\n" .. table.concat(lines, "\n") .. " }"
end

--- A value as messages show it: `(type) value`, tables over lines with the differing path marked.
function M.format(v, mark)
  if v == nil then return "(nil)" end
  if is_matcher(v) then return "(matcher) " .. tostring(v) end
  if type(v) == "table" then return "(table: " .. string.format("%p", v) .. ") " .. dump(v, " ", mark, {}, 0) end
  if type(v) == "string" then return "(string) '" .. v .. "'" end
  return "(" .. type(v) .. ") " .. tostring(v)
end

--- The argument list of a call, with its count (trailing nils kept).
function M.args(...) return { n = select("#", ...), ... } end

function M.copy(t, seen)
  if type(t) ~= "table" then return t end
  seen = seen or {}
  if seen[t] then return seen[t] end
  local c = {}
  seen[t] = c
  for k, v in pairs(t) do c[M.copy(k, seen)] = M.copy(v, seen) end
  return setmetatable(c, getmetatable(t))
end

return M
