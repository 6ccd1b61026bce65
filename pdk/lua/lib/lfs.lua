-- lfs (LuaFileSystem), which Penlight's pl.path requires at load time and request-size-limiting
-- reads a buffered body file's size with. Written for broker: a plugin under replay has no files
-- of its own (bodies are in memory), so every query answers as LuaFileSystem does for a missing
-- file (`nil, message`) instead of touching the host's disk.
local M = { _VERSION = "LuaFileSystem (broker emulation)" }

local function missing(path)
  return nil, tostring(path) .. ": No such file or directory (broker does not emulate a filesystem)", 2
end

M.attributes = missing
M.symlinkattributes = missing
M.mkdir = missing
M.rmdir = missing
M.chdir = missing
M.touch = missing
M.link = missing
M.currentdir = function() return "/" end
M.dir = function(path) error(select(2, missing(path)), 2) end
M.lock = function() return nil, "locks are not emulated" end
M.unlock = M.lock
M.setmode = function() return true, "binary" end
return M
