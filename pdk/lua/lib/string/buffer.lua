-- string.buffer: LuaJIT 2.1's string buffer in pure Lua (written for broker from LuaJIT's documented
-- API). The appended pieces stay in a list until something reads them, so a run of puts joins once.
-- A table here, not userdata: type(buf) is "table". Serialization (encode/decode) and
-- the FFI-only methods (reserve, commit, ref, putcdata) are refused by name.
local M = {}
local B = {}
local MT = { __index = B, __name = "string.buffer" }

local concat, sub, format = table.concat, string.sub, string.format

local function is_buffer(v) return getmetatable(v) == MT end

-- joined contents, unread part only
local function flat(self)
  local n = #self.parts
  if n > 1 or (n == 1 and self.off > 0) then
    local s = concat(self.parts)
    if self.off > 0 then s = sub(s, self.off + 1) end
    self.parts, self.off = { s }, 0
  end
  return self.parts[1] or ""
end

local function piece(v, i)
  local t = type(v)
  if t == "string" then return v end
  if t == "number" then return tostring(v) end
  if is_buffer(v) then return flat(v) end
  local mt = getmetatable(v)
  if mt and mt.__tostring then return tostring(v) end
  error(format("bad argument #%d to 'put' (string expected, got %s)", i, t), 3)
end

--- buffer.new([size [, options]]): an empty buffer (size is a hint, ignored).
function M.new(size, options)
  if options ~= nil or type(size) == "table" then
    local o = type(size) == "table" and size or options
    if o.dict or o.metatable then error("string.buffer: serialization options are not emulated by broker", 2) end
  end
  return setmetatable({ parts = {}, len = 0, off = 0 }, MT)
end

function B:put(...)
  for i = 1, select("#", ...) do
    local s = piece((select(i, ...)), i)
    if #s > 0 then
      self.parts[#self.parts + 1] = s
      self.len = self.len + #s
    end
  end
  return self
end

function B:putf(fmt, ...)
  return self:put(format(fmt, ...))
end

function B:set(s)
  s = piece(s, 1)
  self.parts, self.len, self.off = { s }, #s, 0
  return self
end

function B:reset()
  self.parts, self.len, self.off = {}, 0, 0
  return self
end
B.free = B.reset

function B:skip(n)
  n = math.max(0, math.min(tonumber(n) or 0, self.len))
  if n == self.len then return self:reset() end
  flat(self)
  self.off, self.len = self.off + n, self.len - n
  return self
end

-- get(): everything; get(n, ...): up to n bytes per argument, each consumed from the front
function B:get(...)
  local count = select("#", ...)
  if count == 0 then
    local s = flat(self)
    self:reset()
    return s
  end
  local out = {}
  for i = 1, count do
    local n = select(i, ...)
    local s = flat(self)
    if n == nil then
      out[i] = s
      self:reset()
    else
      n = math.max(0, math.min(math.floor(n), self.len))
      out[i] = sub(s, 1, n)
      self:skip(n)
    end
  end
  return table.unpack(out, 1, count)
end

function B:tostring() return flat(self) end

local function refused(name)
  return function() error("string.buffer: " .. name .. " is not emulated by broker", 2) end
end
for _, name in ipairs({ "encode", "decode", "reserve", "commit", "ref", "putcdata" }) do B[name] = refused(name) end
M.encode, M.decode = refused("encode"), refused("decode")

MT.__len = function(self) return self.len end
MT.__tostring = function(self) return flat(self) end
MT.__concat = function(a, b)
  return (is_buffer(a) and flat(a) or a) .. (is_buffer(b) and flat(b) or b)
end

return M
