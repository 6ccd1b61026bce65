-- LuaJIT's ffi as far as Kong's plugins use it (written for broker; Lua 5.4 has no FFI). ffi.cdef reads
-- declarations loosely and remembers their names; ffi.C answers the C functions broker backs with host
-- operations (open, write, close, strerror: Kong's file-log) and, for any other declared function, one
-- whose call stops the run naming it (broker.unsupported), never a silent answer. cdata are Lua tables:
-- numbers (ffi.new("int", 5)), arrays (ffi.new("char[?]", n), index 0 up) and pointers; ffi.typeof,
-- ffi.cast, ffi.sizeof, ffi.istype, ffi.string and ffi.errno answer for them; os, arch and abi are those
-- of Kong on Linux x86-64.
local H = __host
local unsupported = require "broker.unsupported"
local type, tostring, setmetatable, getmetatable, error = type, tostring, setmetatable, getmetatable, error
local gsub, match, gmatch, sub, byte, char = string.gsub, string.match, string.gmatch, string.sub, string.byte, string.char
local concat = table.concat

local ffi = { os = "Linux", arch = "x64" }

-- the C functions Kong declares at its start (kong.tools.rand's cdef, which every Kong loads) and those
-- broker backs; a backed function needs a declaration, as in LuaJIT
local declared = { open = "function", read = "function", write = "function", close = "function", strerror = "function" }
local constants = {}
local types = {}
local errno = 0

-- sizes of the C types broker knows (x86-64, LP64); a typedef or tag from ffi.cdef adds its name
local SIZES = {
  void = 0, bool = 1, _Bool = 1, char = 1, ["signed char"] = 1, ["unsigned char"] = 1, u_char = 1,
  short = 2, ["unsigned short"] = 2, int = 4, ["unsigned int"] = 4, unsigned = 4, long = 8, ["unsigned long"] = 8,
  ["long long"] = 8, ["unsigned long long"] = 8, float = 4, double = 8, size_t = 8, ssize_t = 8, off_t = 8,
  time_t = 8, intptr_t = 8, uintptr_t = 8, ptrdiff_t = 8, mode_t = 4, pid_t = 4, uid_t = 4, gid_t = 4,
  int8_t = 1, uint8_t = 1, int16_t = 2, uint16_t = 2, int32_t = 4, uint32_t = 4, int64_t = 8, uint64_t = 8,
  wchar_t = 4, socklen_t = 4,
}

---------------------------------------------------------------------------------------------------
-- types: a C type as text, read into its base, pointer depth and array length

local function norm(ct)
  ct = gsub(ct, "%f[%w_]const%f[^%w_]", "")
  ct = gsub(ct, "%f[%w_]volatile%f[^%w_]", "")
  ct = gsub(ct, "%s+", " ")
  ct = gsub(ct, "^ ", "")
  ct = gsub(ct, " $", "")
  ct = gsub(ct, " ?%* ?", "*")
  ct = gsub(ct, " ?%[ ?", "[")
  return ct
end

-- { base = "char", ptr = 1, array = "?" | n | nil }, or nil and LuaJIT's complaint
local function parse(ct)
  local t = norm(ct)
  local dims = match(t, "%[[^%]]*%]$") or ""
  local base, stars = match(sub(t, 1, #t - #dims), "^([%w_ ]-)(%**)$")
  if not base or base == "" then return nil, "invalid C type" end
  local known = SIZES[base] or types[base]
  if not known and not match(base, "^signed ") and not match(base, "^unsigned ") then
    return nil, "declaration specifier expected near '" .. (match(base, "[%w_]+$") or base) .. "'"
  end
  local array
  if dims ~= "" then array = match(dims, "^%[(%??%d*)%]$") end
  return { base = base, ptr = #stars, array = array ~= "?" and tonumber(array) or array, text = t }
end

local function sizeof_elem(t)
  if t.ptr > 0 then return 8 end
  local s = SIZES[t.base]
  if s then return s end
  local alias = types[t.base]
  if alias == "enum" then return 4 end
  if alias and alias ~= "struct" and alias ~= "union" then
    local a = parse(alias)
    return a and sizeof_elem(a)
  end
  return nil -- a struct or union: its layout is not emulated
end

local CType = {}
CType.__index = CType
CType.__name = "ctype"
CType.__tostring = function(c) return "ctype<" .. c.t.text .. ">" end

local function ctype_of(ct, level)
  if getmetatable(ct) == CType then return ct end
  if type(ct) ~= "string" then
    error("bad argument #1 (C type expected, got " .. type(ct) .. ")", level + 1)
  end
  local t, err = parse(ct)
  if not t then error(err, level + 1) end
  return setmetatable({ t = t }, CType)
end

---------------------------------------------------------------------------------------------------
-- cdata

local CData = {}
CData.__name = "cdata"
local function is_cdata(v) return getmetatable(v) == CData end

-- a number for a C argument: a Lua number, or a cdata number
local function num(v)
  if is_cdata(v) then return rawget(v, "value") end
  return v
end

local function scalar(v) return is_cdata(v) and rawget(v, "value") or v end
local function arith(op)
  return function(a, b)
    local x, y = scalar(a), scalar(b)
    if type(x) ~= "number" or type(y) ~= "number" then
      error("attempt to perform arithmetic on a cdata value", 2)
    end
    return op(x, y)
  end
end
CData.__add = arith(function(a, b) return a + b end)
CData.__sub = arith(function(a, b) return a - b end)
CData.__mul = arith(function(a, b) return a * b end)
CData.__div = arith(function(a, b) return a / b end)
CData.__eq = function(a, b) return scalar(a) == scalar(b) end
CData.__lt = function(a, b) return scalar(a) < scalar(b) end
CData.__le = function(a, b) return scalar(a) <= scalar(b) end
CData.__tostring = function(c)
  local t = rawget(c, "ctype").t
  if t.ptr == 0 and not t.array and type(rawget(c, "value")) == "number" then
    return "cdata<" .. t.text .. ">: " .. tostring(rawget(c, "value"))
  end
  return "cdata<" .. t.text .. ">: 0x" .. sub(tostring({}), 10)
end
CData.__index = function(c, k)
  if type(k) == "number" then
    local slots = rawget(c, "slots")
    if slots then return slots[k] end
  end
  error("'" .. rawget(c, "ctype").t.text .. "' has no member named '" .. tostring(k) .. "'", 2)
end
CData.__newindex = function(c, k, v)
  local slots = rawget(c, "slots")
  if type(k) == "number" and slots then
    slots[k] = num(v)
    return
  end
  error("'" .. rawget(c, "ctype").t.text .. "' has no member named '" .. tostring(k) .. "'", 2)
end

local function make(ctype, value)
  return setmetatable({ ctype = ctype, value = value }, CData)
end

function ffi.new(ct, n, ...)
  local c = ctype_of(ct, 2)
  local t = c.t
  if t.array then
    local len = t.array == "?" and n or t.array
    if type(len) ~= "number" then error("wrong number of arguments for 'new' (size of '" .. t.text .. "' needed)", 2) end
    local slots, init = {}, t.array == "?" and { ... } or { n, ... }
    -- an array of numbers starts zeroed; of pointers, NULL (nil)
    local zero = t.ptr == 0 and 0 or nil
    for i = 0, len - 1 do slots[i] = num(init[i + 1]) or zero end
    local d = make(c, nil)
    rawset(d, "slots", slots)
    rawset(d, "length", len)
    return d
  end
  if not sizeof_elem(t) then
    unsupported("ffi", "ffi.new(\"" .. t.text .. "\")")
  end
  return make(c, num(n) or (t.ptr == 0 and 0 or nil))
end

function ffi.typeof(ct) return ctype_of(ct, 2) end
CType.__call = function(c, ...) return ffi.new(c, ...) end

function ffi.cast(ct, v)
  local c = ctype_of(ct, 2)
  if type(v) == "string" then
    local d = make(c, nil)
    rawset(d, "str", v)
    return d
  end
  return make(c, num(v))
end

function ffi.sizeof(ct, n)
  local t = is_cdata(ct) and rawget(ct, "ctype").t or ctype_of(ct, 2).t
  local elem = sizeof_elem(t)
  if not elem then unsupported("ffi", "ffi.sizeof(\"" .. t.text .. "\")") end
  if t.array == "?" then
    local len = is_cdata(ct) and rawget(ct, "length") or n
    return len and elem * len or nil
  end
  return t.array and elem * t.array or elem
end

function ffi.istype(ct, v)
  return is_cdata(v) and rawget(v, "ctype").t.text == ctype_of(ct, 2).t.text
end

function ffi.errno(new)
  local old = errno
  if new ~= nil then errno = num(new) end
  return old
end

-- the bytes a char pointer or array points at, up to a NUL or `len` of them
function ffi.string(p, len)
  len = num(len)
  if type(p) == "string" then return len and sub(p, 1, len) or match(p, "^[^%z]*") end
  if is_cdata(p) then
    local s = rawget(p, "str")
    if s then return len and sub(s, 1, len) or match(s, "^[^%z]*") end
    local slots = rawget(p, "slots")
    if slots then
      local out, stop = {}, len or rawget(p, "length")
      for i = 0, stop - 1 do
        local b = slots[i] or 0
        if not len and b == 0 then break end
        out[#out + 1] = char(b % 256)
      end
      return concat(out)
    end
  end
  error("bad argument #1 to 'string' (cannot convert '" .. (p == nil and "nil" or tostring(p)) .. "' to 'const char *')", 2)
end

local ABI = { ["64bit"] = true, le = true, fpu = true, gc64 = true }
function ffi.abi(param) return ABI[param] == true end

function ffi.gc(cdata, _) return cdata end -- nothing of broker's holds a C resource to free

-- LuaJIT's tonumber converts a cdata number
local lua_tonumber = tonumber
tonumber = function(v, base)
  if is_cdata(v) then return rawget(v, "value") end
  return lua_tonumber(v, base)
end

---------------------------------------------------------------------------------------------------
-- ffi.cdef: declarations read loosely; their names remembered

local function declare(decl)
  decl = gsub(decl, "^%s+", "")
  if decl == "" then return end
  local kind, tag = match(decl, "^(%a+)%s+([%w_]+)%s*{")
  if (kind == "struct" or kind == "union" or kind == "enum") and not match(decl, "^typedef") then
    types[kind .. " " .. tag] = kind
    if kind == "enum" then
      local value = -1
      for name, expr in gmatch(match(decl, "{(.*)}") or "", "([%a_][%w_]*)%s*=?%s*([^,]*)") do
        value = lua_tonumber(expr) or value + 1
        constants[name] = value
      end
    end
    return
  end
  local fwd_kind, fwd_tag = match(decl, "^(%a+)%s+([%w_]+)%s*$")
  if fwd_kind == "struct" or fwd_kind == "union" then
    types[fwd_kind .. " " .. fwd_tag] = fwd_kind
    return
  end
  if match(decl, "^typedef") then
    local fn = match(decl, "%(%s*%*%s*([%a_][%w_]*)%s*%)")
    if fn then types[fn] = "void *" return end
    local body, name = match(decl, "^typedef%s+(.-)%s*([%a_][%w_]*)%s*[%[%d%]]*$")
    if name then
      local tag_kind, tag_name = match(body, "^(%a+)%s+([%w_]+)")
      if tag_kind == "struct" or tag_kind == "union" or tag_kind == "enum" then types[tag_kind .. " " .. tag_name] = tag_kind end
      -- a typedef of a scalar keeps its size; of a struct, its name alone
      types[name] = (match(body, "[{}]") or tag_kind == "struct" or tag_kind == "union") and "struct" or body
    end
    return
  end
  -- `ret name(args)`: a function; `type name;` a variable
  local fname = match(decl, "([%a_][%w_]*)%s*%b()%s*[%w_%s]*$")
  if fname then declared[fname] = "function" return end
  local var = match(decl, "([%a_][%w_]*)%s*[%[%d%]]*$")
  if var then declared[var] = "variable" end
end

function ffi.cdef(text)
  if type(text) ~= "string" then error("bad argument #1 to 'cdef' (string expected, got " .. type(text) .. ")", 2) end
  text = gsub(text, "/%*.-%*/", "")
  text = gsub(text, "//[^\n]*", "")
  text = gsub(text, "#[^\n]*", "")
  -- split at the semicolons outside braces
  local depth, start = 0, 1
  for i = 1, #text do
    local c = byte(text, i)
    if c == 123 then depth = depth + 1
    elseif c == 125 then depth = depth - 1
    elseif c == 59 and depth == 0 then
      declare(sub(text, start, i - 1))
      start = i + 1
    end
  end
  declare(sub(text, start))
end

---------------------------------------------------------------------------------------------------
-- ffi.C

local function bytes(v, len)
  len = num(len)
  local s = type(v) == "string" and v or ffi.string(v, len)
  return len and sub(s, 1, len) or s
end

local function failed(r, e)
  if r < 0 then errno = e end
  return r
end

local BACKED = {
  open = function(path, flags, mode)
    return failed(H("ffi_open", ffi.string(path), num(flags) or 0, num(mode) or 0))
  end,
  write = function(fd, buf, len) return failed(H("ffi_write", num(fd), bytes(buf, len))) end,
  close = function(fd) return failed(H("ffi_close", num(fd))) end,
  strerror = function(n) return ffi.cast("char *", (H("ffi_strerror", num(n)))) end,
}

local function namespace(what, backed)
  return setmetatable({}, {
    __name = "namespace",
    __index = function(_, name)
      if constants[name] then return constants[name] end
      local kind = declared[name]
      if not kind then error("missing declaration for symbol '" .. tostring(name) .. "'", 2) end
      if backed[name] then return backed[name] end
      local label = what .. "." .. name
      if kind == "variable" then unsupported("ffi", label) end
      return function() unsupported("ffi", label) end
    end,
  })
end

ffi.C = namespace("ffi.C", BACKED)

-- a library loads, but none of its functions is backed
function ffi.load(name) return namespace("ffi.load(\"" .. tostring(name) .. "\")", {}) end

-- what the emulation does not do stops the run where it is called
for _, name in ipairs({ "metatype", "copy", "fill", "offsetof", "alignof" }) do
  ffi[name] = function() unsupported("ffi", "ffi." .. name) end
end

return ffi
