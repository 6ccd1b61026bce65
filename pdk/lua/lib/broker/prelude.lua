-- Lua 5.1 / LuaJIT names and behaviours that Kong plugin code relies on, on Lua 5.4.
-- Written for broker; run once per VM before any plugin code.
local type, select, floor, tointeger = type, select, math.floor, math.tointeger
local sformat, debug = string.format, debug

unpack = table.unpack
table.getn = function(t) return #t end
table.maxn = function(t)
  local n = 0
  for k in pairs(t) do if type(k) == "number" and k > n then n = k end end
  return n
end
math.pow = function(a, b) return a ^ b end
-- LuaJIT's math.fmod is C's on doubles: a zero divisor gives nan, where Lua 5.4 raises for integers
local fmod, mtype = math.fmod, math.type
math.fmod = function(a, b)
  if b == 0 and mtype(a) == "integer" and mtype(b) == "integer" then return fmod(a + 0.0, 0.0) end
  return fmod(a, b)
end
math.mod = math.fmod
math.ldexp = math.ldexp or function(m, e) return m * 2.0 ^ e end
math.frexp = math.frexp or function(x)
  if x == 0 then return 0.0, 0 end
  local e = floor(math.log(math.abs(x), 2)) + 1
  return x / 2.0 ^ e, e
end
string.gfind = string.gmatch

-- loadstring(s, name) and load with a function or string, as 5.1 had them
loadstring = function(s, name) return load(s, name, "t") end

-- setfenv / getfenv through a function's _ENV upvalue
local function env_index(f)
  local i = 1
  while true do
    local name = debug.getupvalue(f, i)
    if name == "_ENV" then return i end
    if name == nil then return nil end
    i = i + 1
  end
end
local function func_of(f, level)
  if type(f) == "number" then
    local info = debug.getinfo(f + level, "f")
    if not info then error("bad argument #1 (invalid level)", level + 1) end
    return info.func
  end
  return f
end
getfenv = function(f)
  if f == 0 then return _G end
  f = func_of(f or 1, 2)
  local i = env_index(f)
  if not i then return _G end
  local _, env = debug.getupvalue(f, i)
  return env
end
setfenv = function(f, env)
  f = func_of(f, 2)
  local i = env_index(f)
  if i then debug.upvaluejoin(f, i, function() return env end, 1) end
  return f
end

-- LuaJIT prints every number with "%.14g": 10/2 is "5", 2^53 is "9.007199254741e+15"
local function num2str(n)
  if n ~= n then return (sformat("%f", n):find("-", 1, true) and "-nan" or "nan") end
  if n == math.huge then return "inf" end
  if n == -math.huge then return "-inf" end
  return sformat("%.14g", n)
end
local raw_tostring = tostring
tostring = function(v)
  if type(v) == "number" then return num2str(v) end
  return raw_tostring(v)
end
print = function(...)
  local out = {}
  for i = 1, select("#", ...) do out[i] = tostring((select(i, ...))) end
  io.write(table.concat(out, "\t"), "\n")
end

-- string.format as LuaJIT: %d/%x/%o/%c of a float truncate, %s of a number prints as tostring
local conv_int = { d = true, i = true, x = true, X = true, o = true, c = true, u = true }
string.format = function(fmt, ...)
  local args = table.pack(...)
  local n = 0
  for flags, conv in fmt:gmatch("%%([-+ #0]*%d*%.?%d*)([%a%%])") do
    if conv ~= "%" then
      n = n + 1
      local a = args[n]
      if conv_int[conv] and type(a) == "number" and not tointeger(a) then
        args[n] = a >= 0 and floor(a) or -floor(-a)
      elseif conv == "s" and type(a) == "number" then
        args[n] = num2str(a)
      end
    end
  end
  fmt = fmt:gsub("%%([-+ #0]*%d*%.?%d*)u", "%%%1d")
  return sformat(fmt, table.unpack(args, 1, args.n))
end

-- bit (LuaBitOp): 32-bit signed results
local function tobit(x)
  x = floor(x) & 0xffffffff
  if x >= 0x80000000 then x = x - 0x100000000 end
  return x
end
local function u(x) return floor(x) & 0xffffffff end
local bit = {
  tobit = tobit,
  bnot = function(x) return tobit(~u(x)) end,
  band = function(x, ...) local r = u(x) for i = 1, select("#", ...) do r = r & u((select(i, ...))) end return tobit(r) end,
  bor = function(x, ...) local r = u(x) for i = 1, select("#", ...) do r = r | u((select(i, ...))) end return tobit(r) end,
  bxor = function(x, ...) local r = u(x) for i = 1, select("#", ...) do r = r ~ u((select(i, ...))) end return tobit(r) end,
  lshift = function(x, n) return tobit(u(x) << (n & 31)) end,
  rshift = function(x, n) return tobit(u(x) >> (n & 31)) end,
  arshift = function(x, n) return tobit(tobit(x) // (1 << (n & 31))) end,
  rol = function(x, n) n = n & 31 return tobit((u(x) << n) | (u(x) >> (32 - n))) end,
  ror = function(x, n) n = n & 31 return tobit((u(x) >> n) | (u(x) << (32 - n))) end,
  bswap = function(x)
    x = u(x)
    return tobit(((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >> 8) & 0xff00) | (x >> 24))
  end,
  tohex = function(x, n)
    n = n or 8
    local upper = n < 0
    n = math.abs(n)
    local s = sformat(upper and "%08X" or "%08x", u(x))
    return s:sub(-n)
  end,
}
package.loaded.bit = bit
_G.bit = bit -- LuaJIT opens it as a global too

-- LuaJIT's table extensions
local function isempty(t) return next(t) == nil end
local function nkeys(t) local n = 0 for _ in pairs(t) do n = n + 1 end return n end
local function clear(t) for k in pairs(t) do t[k] = nil end end
local function clone(t) local c = {} for k, v in pairs(t) do c[k] = v end return setmetatable(c, getmetatable(t)) end
local function isarray(t)
  if type(t) ~= "table" then return false end
  local n = 0
  for k in pairs(t) do
    if type(k) ~= "number" or k < 1 or floor(k) ~= k then return false end
    n = n + 1
  end
  for i = 1, n do if t[i] == nil then return false end end
  return true
end
table.new = function() return {} end
table.clear, table.isempty, table.nkeys, table.clone, table.isarray = clear, isempty, nkeys, clone, isarray
package.loaded["table.new"] = table.new
package.loaded["table.clear"] = clear
package.loaded["table.isempty"] = isempty
package.loaded["table.nkeys"] = nkeys
package.loaded["table.clone"] = clone
package.loaded["table.isarray"] = isarray
package.loaded["jit"] = { version = "LuaJIT 2.1.0-beta3 (emulated by broker on Lua 5.4)", os = "Linux", arch = "x64",
  on = function() end, off = function() end, flush = function() end, status = function() return false end }
-- LuaJIT has jit as a global too (code tests `if jit then`)
jit = package.loaded["jit"]

-- There is no shell (wasm's system() cannot spawn one): os.execute() says so, and a command runs
-- nothing, answering as sh does for a command it cannot find (Lua 5.2's form, which OpenResty's
-- LuaJIT uses too). Penlight's utils.executeex, which Kong's kong.tools.system calls, then fails.
os.execute = function(cmd)
  if cmd == nil then return false end
  return nil, "exit", 127
end
