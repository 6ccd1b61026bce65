-- lua_pack (Kong's lpack, a C module in Kong's build), written for broker on Lua 5.4's string.pack:
-- pack(fmt, ...) and unpack(s, fmt [, init]) with lpack's codes, as on the x86-64 Kong runs on (little
-- endian unless `>`; char 1 byte, short 2, int 4, long and size_t 8):
--   z zero-terminated string, p / P / a a string after its length in 1, 2 or 8 bytes, A a string (in
--   unpack A<n> reads n bytes), f float, d / n double, c / C signed / unsigned char, s / S short,
--   i / I int, l / L long, B a string of bits, X a string of hex digits, x a zero byte (unpack: skips),
--   < > = byte order; a number after a code repeats it. unpack answers the next position first, and
--   stops (without an error) where the string runs out.
local spack, sunpack = string.pack, string.unpack
local M = { _VERSION = "2.0.0" }

-- integer codes: their string.pack letter and whether they are signed
local INTS = {
  c = { "i1", true }, C = { "I1", false }, s = { "i2", true }, S = { "I2", false },
  i = { "i4", true }, I = { "I4", false }, l = { "i8", true }, L = { "I8", false },
}
local FLOATS = { f = "f", d = "d", n = "d" }
local PREFIXED = { p = "I1", P = "I2", a = "I8" }

local function bad(c) error("bad argument #1 to 'pack' (bad code `" .. c .. "')", 3) end

-- C's cast of a number to an integer of `bytes` bytes: the fraction dropped, then wrapped around
local function cast(v, letter)
  local n = math.tointeger(v >= 0 and math.floor(v) or math.ceil(v))
  if not n then error("bad argument to 'pack' (number has no integer representation)", 4) end
  local bits = tonumber(letter:sub(2)) * 8
  if bits == 64 then return n end
  n = n % (1 << bits)
  if letter:sub(1, 1) == "i" and n >= (1 << (bits - 1)) then n = n - (1 << bits) end
  return n
end

local function number(v, i)
  local n = tonumber(v)
  if n == nil then error("bad argument #" .. i .. " to 'pack' (number expected, got " .. type(v) .. ")", 4) end
  return n
end

local function str(v, i)
  if type(v) == "number" then return tostring(v) end
  if type(v) ~= "string" then error("bad argument #" .. i .. " to 'pack' (string expected, got " .. type(v) .. ")", 4) end
  return v
end

local ORDERS = { ["<"] = "<", ["="] = "<", [">"] = ">" }

-- each code of a format with its repeat count (1 when none is written) and the count as written; a byte-order
-- code comes as "order" with string.pack's letter for it; separators are skipped
local function codes(fmt)
  local next_code = fmt:gmatch("(.)(%d*)")
  return function()
    while true do
      local c, count = next_code()
      if c == nil then return nil end
      if ORDERS[c] then return "order", 0, ORDERS[c] end
      if c ~= " " and c ~= "," then return c, count ~= "" and tonumber(count) or 1, count end
    end
  end
end

function M.pack(fmt, ...)
  local args, argi, out, order = table.pack(...), 1, {}, "<"
  local function nextarg()
    argi = argi + 1
    return args[argi - 1], argi
  end
  for c, n, count in codes(fmt) do
    if c == "order" then order = count
    else
      for _ = 1, n do
        if INTS[c] then
          local v, i = nextarg()
          out[#out + 1] = spack(order .. INTS[c][1], cast(number(v, i), INTS[c][1]))
        elseif FLOATS[c] then
          local v, i = nextarg()
          out[#out + 1] = spack(order .. FLOATS[c], number(v, i))
        elseif c == "A" or c == "z" then
          local v, i = nextarg()
          out[#out + 1] = str(v, i) .. (c == "z" and "\0" or "")
        elseif PREFIXED[c] then
          local v, i = nextarg()
          local s = str(v, i)
          out[#out + 1] = spack(order .. PREFIXED[c], cast(#s, PREFIXED[c]:lower())) .. s
        elseif c == "x" then
          out[#out + 1] = "\0"
        elseif c == "B" then
          local v, i = nextarg()
          local bits = str(v, i)
          for at = 1, #bits, 8 do
            local chunk, byte = bits:sub(at, at + 7), 0
            for k = 1, 8 do byte = (byte << 1) | ((k <= #chunk and chunk:sub(k, k) ~= "0") and 1 or 0) end
            out[#out + 1] = string.char(byte)
          end
        elseif c == "X" then
          local v, i = nextarg()
          local digits = str(v, i):gsub("[^%x]", "")
          if #digits % 2 == 1 then digits = digits .. "0" end
          out[#out + 1] = (digits:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end))
        else
          bad(c)
        end
      end
    end
  end
  return table.concat(out)
end

function M.unpack(s, fmt, init)
  if type(s) ~= "string" then error("bad argument #1 to 'unpack' (string expected, got " .. type(s) .. ")", 2) end
  if type(fmt) ~= "string" then error("bad argument #2 to 'unpack' (string expected, got " .. type(fmt) .. ")", 2) end
  local i, len, order, values = math.tointeger(math.floor(tonumber(init) or 1)) - 1, #s, "<", {}
  local function read(letter)
    local size = spack(letter, 0):len()
    if i + size > len then return nil end
    local v = sunpack(order .. letter, s, i + 1)
    i = i + size
    return v
  end
  for c, n, count in codes(fmt) do
    if c == "order" then order = count
    elseif c == "A" or c == "B" or c == "X" then
      if count == "0" and c == "A" then values[#values + 1] = ""
      elseif count ~= "0" then
        if i + n > len then break end
        local bytes = s:sub(i + 1, i + n)
        i = i + n
        if c == "B" then
          bytes = bytes:gsub(".", function(ch)
            local b, bits = ch:byte(), {}
            for k = 7, 0, -1 do bits[#bits + 1] = ((b >> k) & 1) == 1 and "1" or "0" end
            return table.concat(bits)
          end)
        elseif c == "X" then
          bytes = bytes:gsub(".", function(ch) return string.format("%02X", ch:byte()) end)
        end
        values[#values + 1] = bytes
      end
    elseif c == "x" then
      i = i + n
    else
      local stop = false
      for _ = 1, n do
        local v
        if INTS[c] then
          v = read(INTS[c][1])
          -- lpack answers a Lua number: an unsigned long past 2^63 is a double, as in C
          if v and c == "L" and v < 0 then v = v + 18446744073709551616.0 end
        elseif FLOATS[c] then
          v = read(FLOATS[c])
        elseif PREFIXED[c] then
          local size = read(PREFIXED[c])
          if size and i + size <= len then
            v = s:sub(i + 1, i + size)
            i = i + size
          elseif size then
            i = i - spack(PREFIXED[c], 0):len()
          end
        elseif c == "z" then
          if i < len then
            local nul = s:find("\0", i + 1, true) or (len + 1)
            v = s:sub(i + 1, nul - 1)
            i = nul
          end
        else
          error("bad argument #1 to 'unpack' (bad code `" .. c .. "')", 2)
        end
        if v == nil then stop = true break end
        values[#values + 1] = v
      end
      if stop then break end
    end
  end
  return i + 1, table.unpack(values)
end

return M
