-- io.open and io.lines on the host's files (written for broker): a plugin reads the keys and templates
-- it was configured with, relative paths from the fixture's folder. A replay writes no file: a write
-- mode, os.remove and os.rename answer nil, err as for a read-only filesystem (the host decides). Under
-- `broker pdk test` a spec and its Kong's plugins write as under busted: a write or update mode opens a
-- host file whose writes reach the disk at once, os.tmpname makes /tmp/lua_XXXXXX.
local H = __host
local sub, find, type, tonumber, format = string.sub, string.find, type, tonumber, string.format

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

-- A file opened to write or update: the host holds the descriptor, the position is kept here (Node has
-- no lseek). Writes go to disk at once, which is all a C stream promises by flush or close; a read asks
-- for the rest of the file and reads it as File does (specs read back what they wrote, rarely much).
local HostFile = {}
HostFile.__index = HostFile
HostFile.__name = "FILE*"
HostFile.__tostring = File.__tostring

local function usable(f)
  if f.closed then error("attempt to use a closed file", 3) end
end

function HostFile:read(...)
  usable(self)
  local rest, err, errno = H("fs_pread", self.fd, self.pos, -1)
  if not rest then return nil, err, errno end
  local view = setmetatable({ data = rest, pos = 1 }, File)
  local out = table.pack(view:read(...))
  self.pos = self.pos + view.pos - 1
  return table.unpack(out, 1, out.n)
end

HostFile.lines = File.lines

-- LuaJIT as Kong builds it (LUAJIT_ENABLE_LUA52COMPAT) returns the file from write, for chaining
function HostFile:write(...)
  usable(self)
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if type(v) == "number" then
      v = format("%.14g", v)
    elseif type(v) ~= "string" then
      error(("bad argument #%d to 'write' (string expected, got %s)"):format(i, type(v)), 2)
    end
    local pos, err, errno = H("fs_pwrite", self.fd, self.pos, v)
    if not pos then return nil, err, errno end
    self.pos = pos
  end
  return self
end

function HostFile:seek(whence, offset)
  usable(self)
  whence, offset = whence or "cur", offset or 0
  local base
  if whence == "set" then
    base = 0
  elseif whence == "cur" then
    base = self.pos
  elseif whence == "end" then
    local size, err, errno = H("fs_size", self.fd)
    if not size then return nil, err, errno end
    base = size
  else
    error(("bad argument #1 to 'seek' (invalid option '%s')"):format(tostring(whence)), 2)
  end
  if base + offset < 0 then return nil, "Invalid argument", 22 end
  self.pos = base + offset
  return self.pos
end

function HostFile:flush() usable(self) return true end
function HostFile:setvbuf() usable(self) return true end

function HostFile:close()
  usable(self)
  self.closed = true
  return H("fs_close", self.fd)
end

-- a file the plugin dropped is closed when collected, as Lua closes its FILE*
HostFile.__gc = function(f)
  if not f.closed then
    f.closed = true
    H("fs_close", f.fd)
  end
end

local open, lines, io_type = io.open, io.lines, io.type

io.open = function(path, mode)
  mode = mode or "r"
  if type(path) ~= "string" then return open(path, mode) end
  if find(mode, "^r") and not find(mode, "+", 1, true) then
    local data, err, errno = H("fs_read", path)
    if not data then return nil, err, errno end
    return setmetatable({ data = data, pos = 1 }, File)
  end
  local fd, err, errno = H("fs_open", path, mode)
  if not fd then return nil, err, errno end
  local f = setmetatable({ fd = fd, pos = 0 }, HostFile)
  -- "a" starts at the end (glibc); "a+" reads from the start, writes at the end
  if mode == "a" or mode == "ab" then f.pos = H("fs_size", fd) end
  return f
end

io.lines = function(path, ...)
  if path == nil then return lines() end
  local f, err = io.open(path)
  if not f then error(err, 2) end
  return f:lines(...)
end

io.type = function(v)
  local mt = getmetatable(v)
  if mt == File or mt == HostFile then return v.closed and "closed file" or "file" end
  return io_type(v)
end

-- os's file functions on the host's files too (the VM's own would act on its in-memory filesystem)
local function path_arg(v, i, name)
  if type(v) == "number" then return tostring(v) end
  if type(v) ~= "string" then
    error(("bad argument #%d to '%s' (string expected, got %s)"):format(i, name, v == nil and "no value" or type(v)), 3)
  end
  return v
end

os.tmpname = function()
  local name, err = H("fs_tmpname")
  if not name then error(err, 2) end
  return name
end
os.remove = function(path) return H("fs_remove", path_arg(path, 1, "remove")) end
os.rename = function(from, to) return H("fs_rename", path_arg(from, 1, "rename"), path_arg(to, 2, "rename")) end
