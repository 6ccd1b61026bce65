-- broker's prelude: run once in each Lua 5.4 VM before any plugin code, it gives plugins the names
-- and the number formatting of the Lua 5.1 / LuaJIT 2.1 that Kong runs them on. Each section says
-- which LuaJIT behaviour it stands for; prelude.test.ts checks each against what LuaJIT prints.
local _G, type, select, pairs, next = _G, type, select, pairs, next
local floor, huge, mtype, tointeger = math.floor, math.huge, math.type, math.tointeger
local fmt54, concat, pack, unpack54 = string.format, table.concat, table.pack, table.unpack
local getinfo, getupvalue, upvaluejoin = debug.getinfo, debug.getupvalue, debug.upvaluejoin

---------------------------------------------------------------------------------------------------
-- Names Lua 5.1 had and 5.4 dropped or renamed.
unpack = unpack54
-- a syntax error at the end of a chunk: LuaJIT quotes the token (`near '<eof>'`), Lua 5.4 does not
local load54 = load
load = function(chunk, ...)
  local f, err = load54(chunk, ...)
  if f == nil and type(err) == "string" then err = (err:gsub("near <eof>$", "near '<eof>'")) end
  return f, err
end
loadstring = function(chunk, chunkname) return load(chunk, chunkname, "t") end
string.gfind = string.gmatch
table.getn = function(t) return #t end
table.maxn = function(t)
  local largest = 0
  for key in pairs(t) do
    if mtype(key) ~= nil and key > largest then largest = key end
  end
  return largest
end
math.pow = function(base, exponent) return base ^ exponent end
math.ldexp = math.ldexp or function(mantissa, exponent) return mantissa * 2.0 ^ exponent end
math.frexp = math.frexp or function(x)
  if x == 0 then return 0.0, 0 end
  local exponent = floor(math.log(math.abs(x), 2)) + 1
  return x / 2.0 ^ exponent, exponent
end
do
  -- C's fmod on doubles, as LuaJIT has it: a zero divisor is nan where 5.4 raises for two integers.
  local fmod54 = math.fmod
  math.fmod = function(a, b)
    if b == 0 and mtype(a) == "integer" and mtype(b) == "integer" then return fmod54(a * 1.0, 0.0) end
    return fmod54(a, b)
  end
  math.mod = math.fmod
end

---------------------------------------------------------------------------------------------------
-- Function environments. 5.4 keeps a function's globals in its upvalue named _ENV (when it has one):
-- getfenv reads that upvalue, setfenv points it at a fresh cell holding the new table. Joining the
-- upvalue to a new closure's (so other functions sharing the old _ENV keep it) is the technique
-- Sergey Rozhenko posted to lua-l in June 2010; this code is written for broker.
local function resolve_function(target, depth)
  if type(target) ~= "number" then return target end
  local frame = getinfo(target + depth, "f")
  if frame == nil then error("bad argument #1 (invalid level)", depth + 1) end
  return frame.func
end

local function env_upvalue(fn)
  local count = getinfo(fn, "u").nups
  for index = 1, count do
    if getupvalue(fn, index) == "_ENV" then return index end
  end
end

getfenv = function(target)
  if target == 0 then return _G end
  local fn = resolve_function(target or 1, 2)
  local index = env_upvalue(fn)
  if index == nil then return _G end
  return select(2, getupvalue(fn, index))
end

setfenv = function(target, env)
  local fn = resolve_function(target, 2)
  local index = env_upvalue(fn)
  if index ~= nil then
    local cell = function() return env end
    upvaluejoin(fn, index, cell, 1)
  end
  return fn
end

---------------------------------------------------------------------------------------------------
-- Numbers as text. LuaJIT has one number type and writes it with "%.14g": 10/2 reads "5",
-- 2^53 reads "9.007199254741e+15"; nan and the infinities are spelled as C's printf spells them.
local function number_text(n)
  if n ~= n then return fmt54("%f", n):sub(1, 1) == "-" and "-nan" or "nan" end
  if n == huge or n == -huge then return n > 0 and "inf" or "-inf" end
  return fmt54("%.14g", n)
end

do
  local tostring54 = tostring
  tostring = function(value)
    if type(value) == "number" then return number_text(value) end
    return tostring54(value)
  end
end

-- Integer arguments as LuaJIT takes them: a float is truncated toward zero where Lua 5.4 raises "number has no
-- integer representation" (a plugin's `s:gsub(p, r, (#s - 1) / 64)`, `s:sub(1, n / 2)`).
do
  local function int(v)
    if mtype(v) ~= "float" or v ~= v or v == huge or v == -huge then return v end
    return v < 0 and -floor(-v) or floor(v)
  end
  local sub, byte, rep, gsub, find, match, char = string.sub, string.byte, string.rep, string.gsub, string.find,
    string.match, string.char
  local tconcat, tunpack, random = table.concat, table.unpack, math.random
  string.sub = function(s, i, j) return sub(s, int(i), int(j)) end
  string.byte = function(s, i, j) return byte(s, int(i), int(j)) end
  string.rep = function(s, n, sep) return rep(s, int(n), sep) end
  string.gsub = function(s, p, r, n) return gsub(s, p, r, int(n)) end
  string.find = function(s, p, init, plain) return find(s, p, int(init), plain) end
  string.match = function(s, p, init) return match(s, p, int(init)) end
  string.char = function(...)
    local n = select("#", ...)
    if n == 1 then return char(int((...))) end
    local t = pack(...)
    for i = 1, n do t[i] = int(t[i]) end
    return char(unpack54(t, 1, n))
  end
  table.concat = function(t, sep, i, j) return tconcat(t, sep, int(i), int(j)) end
  table.unpack = function(t, i, j) return tunpack(t, int(i), int(j)) end
  math.random = function(m, n)
    if m == nil then return random() end
    if n == nil then return random(int(m)) end
    return random(int(m), int(n))
  end
  unpack = table.unpack
end

-- string.format as LuaJIT: an integer conversion of a float truncates toward zero, %u is %d, and
-- %s of a number writes it as tostring does.
do
  local integer_conversion = { c = 1, d = 1, i = 1, o = 1, u = 1, x = 1, X = 1 }
  local SPEC = "%%([-+ #0]*%d*%.?%d*)([%a%%])"
  string.format = function(template, ...)
    local args = pack(...)
    local at = 0
    for _, conversion in template:gmatch(SPEC) do
      if conversion ~= "%" then
        at = at + 1
        local arg = args[at]
        if type(arg) == "number" then
          if integer_conversion[conversion] and not tointeger(arg) then
            args[at] = arg < 0 and -floor(-arg) or floor(arg)
          elseif conversion == "s" then
            args[at] = number_text(arg)
          end
        end
      end
    end
    return fmt54((template:gsub("%%([-+ #0]*%d*%.?%d*)u", "%%%1d")), unpack54(args, 1, args.n))
  end
end

-- print writes a line to the output here; ngx.lua makes it a log notice, as OpenResty's is.
print = function(...)
  local parts = {}
  for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
  io.write(concat(parts, "\t"), "\n")
end

---------------------------------------------------------------------------------------------------
-- The bit module (LuaBitOp), which LuaJIT opens as a global: 32-bit operations, results signed.
do
  local MASK, SIGN, WRAP = 0xffffffff, 0x80000000, 0x100000000
  local function word(x) return floor(x) & MASK end -- the low 32 bits, unsigned
  local function signed(w) return w >= SIGN and w - WRAP or w end
  local function fold(op)
    return function(x, ...)
      local acc = word(x)
      for i = 1, select("#", ...) do acc = op(acc, word((select(i, ...)))) end
      return signed(acc)
    end
  end
  local bit = {}
  bit.tobit = function(x) return signed(word(x)) end
  bit.bnot = function(x) return signed(~word(x) & MASK) end
  bit.band = fold(function(a, b) return a & b end)
  bit.bor = fold(function(a, b) return a | b end)
  bit.bxor = fold(function(a, b) return a ~ b end)
  bit.lshift = function(x, n) return signed((word(x) << (n & 31)) & MASK) end
  bit.rshift = function(x, n) return signed(word(x) >> (n & 31)) end
  bit.arshift = function(x, n) return signed(word(x)) // (1 << (n & 31)) end -- floor division keeps the sign
  bit.rol = function(x, n)
    local w, s = word(x), n & 31
    return signed(((w << s) | (w >> (32 - s))) & MASK)
  end
  bit.ror = function(x, n)
    local w, s = word(x), n & 31
    return signed(((w >> s) | (w << (32 - s))) & MASK)
  end
  bit.bswap = function(x)
    local w = word(x)
    local b0, b1, b2, b3 = w & 0xff, (w >> 8) & 0xff, (w >> 16) & 0xff, w >> 24
    return signed((b0 << 24) | (b1 << 16) | (b2 << 8) | b3)
  end
  bit.tohex = function(x, n)
    n = n or 8
    local hex = fmt54(n < 0 and "%08X" or "%08x", word(x))
    return hex:sub(-math.abs(n))
  end
  package.loaded.bit = bit
  _G.bit = bit
end

---------------------------------------------------------------------------------------------------
-- LuaJIT's table extensions, as modules (require "table.new") and as fields of table.
do
  local ext = {}
  ext.new = function() return {} end -- the size hints only preallocate in LuaJIT
  ext.clear = function(t)
    for key in pairs(t) do t[key] = nil end
  end
  ext.isempty = function(t) return next(t) == nil end
  ext.nkeys = function(t)
    local count = 0
    for _ in pairs(t) do count = count + 1 end
    return count
  end
  ext.clone = function(t)
    local copy = {}
    for key, value in pairs(t) do copy[key] = value end
    return setmetatable(copy, getmetatable(t))
  end
  ext.isarray = function(t)
    if type(t) ~= "table" then return false end
    -- every key a whole number from 1, and none of 1..count missing
    local count = 0
    for key in pairs(t) do
      if mtype(key) == nil or key < 1 or key ~= floor(key) then return false end
      count = count + 1
    end
    for i = 1, count do
      if t[i] == nil then return false end
    end
    return true
  end
  for name, fn in pairs(ext) do
    table[name] = fn
    package.loaded["table." .. name] = fn
  end
end

---------------------------------------------------------------------------------------------------
-- The jit module and global (code tests `if jit then`); nothing compiles here.
do
  local noop = function() end
  jit = {
    version = "LuaJIT 2.1.0-beta3 (emulated by broker on Lua 5.4)",
    os = "Linux",
    arch = "x64",
    on = noop,
    off = noop,
    flush = noop,
    status = function() return false end,
  }
  package.loaded.jit = jit
end

---------------------------------------------------------------------------------------------------
-- No shell: wasm's system() cannot start one. os.execute() without a command says so; a command runs
-- nothing and answers as sh does for a command it cannot find (Lua 5.2's three values, as OpenResty's
-- LuaJIT gives them). Penlight's utils.executeex, which Kong's kong.tools.system calls, then fails.
os.execute = function(command)
  if command == nil then return false end
  return nil, "exit", 127
end
