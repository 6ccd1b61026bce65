-- io.open and io.lines on the host's files (written for broker): a plugin reads the keys and templates
-- it was configured with, relative paths from the fixture's folder. Files open for reading only: a
-- replay writes no file, and a write mode answers nil, err as for a read-only filesystem.
local H = __host
local sub, find, type, tonumber = string.sub, string.find, type, tonumber

local File = {}
File.__index = File
File.__name = "FILE*"
File.__tostring = function(f) return f.closed and "file (closed)" or "file (broker)" end

local function read_one(f, fmt)
  local data, pos = f.data, f.pos
  if type(fmt) == "number" then
    if pos > #data then return nil end
    f.pos = pos + fmt
    return sub(data, pos, pos + fmt - 1)
  end
  fmt = tostring(fmt):gsub("^%*", "")
  local c = sub(fmt, 1, 1)
  if c == "a" then
    f.pos = #data + 1
    return sub(data, pos)
  end
  if c == "l" or c == "L" then
    if pos > #data then return nil end
    local nl = find(data, "\n", pos, true)
    local stop = nl or #data
    f.pos = stop + 1
    return sub(data, pos, (c == "L" or not nl) and stop or stop - 1)
  end
  if c == "n" then
    local s, e = find(data, "^%s*[-+]?%d*%.?%d+[eE]?[-+]?%d*", pos)
    if not s then return nil end
    f.pos = e + 1
    return tonumber((sub(data, s, e):gsub("^%s+", "")))
  end
  error("bad argument #1 to 'read' (invalid format)", 3)
end

function File:read(...)
  if self.closed then error("attempt to use a closed file", 2) end
  local n = select("#", ...)
  if n == 0 then return read_one(self, "l") end
  local out = {}
  for i = 1, n do
    out[i] = read_one(self, (select(i, ...)))
    if out[i] == nil then return table.unpack(out, 1, i) end
  end
  return table.unpack(out, 1, n)
end

function File:lines(...)
  local fmts = table.pack(...)
  return function()
    if fmts.n == 0 then return self:read("l") end
    return self:read(table.unpack(fmts, 1, fmts.n))
  end
end

function File:seek(whence, offset)
  whence, offset = whence or "cur", offset or 0
  local base = whence == "set" and 0 or whence == "end" and #self.data or self.pos - 1
  self.pos = base + offset + 1
  return base + offset
end

function File:close() self.closed = true return true end
function File:flush() return true end
function File:setvbuf() return true end
function File:write() return nil, "Bad file descriptor", 9 end

local open, lines, io_type = io.open, io.lines, io.type

io.open = function(path, mode)
  mode = mode or "r"
  if type(path) ~= "string" then return open(path, mode) end
  if not find(mode, "^r") or find(mode, "+", 1, true) then
    return nil, path .. ": Read-only file system (a replay writes no file)", 30
  end
  local data, err, errno = H("fs_read", path)
  if not data then return nil, err, errno end
  return setmetatable({ data = data, pos = 1 }, File)
end

io.lines = function(path, ...)
  if path == nil then return lines() end
  local f, err = io.open(path)
  if not f then error(err, 2) end
  return f:lines(...)
end

io.type = function(v)
  if getmetatable(v) == File then return v.closed and "closed file" or "file" end
  return io_type(v)
end
