-- kong.tools.table, for a plugin run without a Kong checkout on lua_path (Kong's own file wins when
-- one is there). Written for broker from Kong 3.x's documented behaviour.
local M = {}

M.EMPTY = setmetatable({}, { __newindex = function() error("attempt to modify a read-only table", 2) end })
M.pack = function(...) return { n = select("#", ...), ... } end
M.unpack = function(t, i, j) return table.unpack(t, i or 1, j or t.n or #t) end

--- A new table with t1's then t2's keys.
function M.table_merge(t1, t2)
  local res = {}
  for k, v in pairs(t1 or {}) do res[k] = v end
  for k, v in pairs(t2 or {}) do res[k] = v end
  return res
end

--- As table_merge, but a t2 value of ngx.null keeps t1's.
function M.null_aware_table_merge(t1, t2)
  local res = {}
  for k, v in pairs(t1 or {}) do res[k] = v end
  for k, v in pairs(t2 or {}) do
    if res[k] == nil or v ~= ngx.null then res[k] = v end
  end
  return res
end

function M.table_contains(arr, val)
  if arr then
    for _, v in pairs(arr) do if v == val then return true end end
  end
  return false
end

local function is_array_strict(t)
  if type(t) ~= "table" then return false end
  local n = 0
  for k in pairs(t) do
    if type(k) ~= "number" or k < 1 or k % 1 ~= 0 then return false end
    n = n + 1
  end
  for i = 1, n do if t[i] == nil then return false end end
  return true
end

local function is_array_lapis(t)
  if type(t) ~= "table" then return false end
  local i = 0
  for _ in pairs(t) do
    i = i + 1
    if t[i] == nil and t[tostring(i)] == nil then return false end
  end
  return true
end

--- mode "strict" (default): keys 1..n only; "fast": table.isarray; "lapis": also "1", "2" …
function M.is_array(t, mode)
  if mode == "lapis" then return is_array_lapis(t) end
  if mode == "fast" then return type(t) == "table" and require("table.isarray")(t) end
  return is_array_strict(t)
end
M.is_lapis_array = is_array_lapis

function M.deep_copy(orig, copy_mt)
  if copy_mt == nil then copy_mt = true end
  if type(orig) ~= "table" then return orig end
  local copy = {}
  for k, v in next, orig do copy[M.deep_copy(k)] = M.deep_copy(v, copy_mt) end
  if copy_mt then setmetatable(copy, getmetatable(orig)) end
  return copy
end

function M.shallow_copy(orig)
  if type(orig) ~= "table" then return orig end
  local copy = {}
  for k, v in pairs(orig) do copy[k] = v end
  return copy
end

--- t2 over t1, tables merged key by key.
function M.deep_merge(t1, t2)
  local res = M.deep_copy(t1)
  for k, v in pairs(t2) do
    if type(v) == "table" and type(res[k]) == "table" then res[k] = M.deep_merge(res[k], v)
    elseif type(v) == "table" then res[k] = M.deep_copy(v)
    else res[k] = v end
  end
  return res
end

function M.cycle_aware_deep_copy(orig, remove_metatables, deep_copy_keys, cache)
  if type(orig) ~= "table" then return orig end
  cache = cache or {}
  if cache[orig] then return cache[orig] end
  local copy = {}
  cache[orig] = copy
  for k, v in pairs(orig) do
    if deep_copy_keys then k = M.cycle_aware_deep_copy(k, remove_metatables, deep_copy_keys, cache) end
    copy[k] = M.cycle_aware_deep_copy(v, remove_metatables, deep_copy_keys, cache)
  end
  if not remove_metatables then setmetatable(copy, getmetatable(orig)) end
  return copy
end

function M.cycle_aware_deep_merge(t1, t2, remove_metatables, deep_copy_keys, cache)
  cache = cache or {}
  local merged = M.cycle_aware_deep_copy(t1, remove_metatables, deep_copy_keys, cache)
  for k, v in pairs(t2) do
    if type(v) == "table" and type(merged[k]) == "table" then
      merged[k] = M.cycle_aware_deep_merge(merged[k], v, remove_metatables, deep_copy_keys, cache)
    else
      merged[k] = M.cycle_aware_deep_copy(v, remove_metatables, deep_copy_keys, cache)
    end
  end
  return merged
end

--- The arrays given, one after another, in a new array.
function M.concat(...)
  local res = {}
  for i = 1, select("#", ...) do
    local t = select(i, ...)
    if t then for _, v in ipairs(t) do res[#res + 1] = v end end
  end
  return res
end

--- Adds error v under k; a second error under the same key makes a list.
function M.add_error(errors, k, v)
  if not errors then errors = {} end
  if errors and errors[k] then
    if type(errors[k]) ~= "table" then errors[k] = { errors[k] } end
    table.insert(errors[k], v)
  else
    errors[k] = v
  end
  return errors
end

--- t[path[1]][path[2]]…, or nil where a step is missing.
function M.table_path(t, path)
  local current = t
  for _, k in ipairs(path) do
    if type(current) ~= "table" then return nil end
    current = current[k]
  end
  return current
end

return M
