-- `lfs` for broker: LuaFileSystem's names with no filesystem behind them. Penlight's pl.path loads
-- lfs, and Kong's request-size-limiting asks it for the size of a body spooled to disk; a replay
-- keeps every body in memory, so each path is answered as LuaFileSystem answers a missing one.
local M = { _VERSION = "LuaFileSystem (broker emulation)" }

local function missing(path)
  local message = ("%s: No such file or directory (broker does not emulate a filesystem)"):format(tostring(path))
  return nil, message, 2
end

-- Reading a path's attributes, and every change to the tree: as for a path that does not exist.
M.attributes, M.symlinkattributes = missing, missing
M.mkdir, M.rmdir, M.chdir, M.touch, M.link = missing, missing, missing, missing, missing

-- Listing a folder raises rather than returning, as LuaFileSystem's does for one it cannot open.
M.dir = function(path)
  local _, message = missing(path)
  error(message, 2)
end

M.currentdir = function() return "/" end
M.setmode = function() return true, "binary" end
M.lock = function() return nil, "locks are not emulated" end
M.unlock = M.lock

return M
