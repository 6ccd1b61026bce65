-- `lfs` for broker: LuaFileSystem's queries on the host's files (relative paths from the fixture's folder, or the
-- run's root under `broker pdk test`), as Penlight's pl.path asks them; a replay writes no file, so every change to the tree
-- answers nil, err. Under `broker pdk test` mkdir and rmdir act (pl.dir.makepath and rmtree need them).
local H = __host
local M = { _VERSION = "LuaFileSystem 1.8.0 (broker)" }

function M.attributes(path, what)
  local attrs, err, errno = H("fs_stat", path)
  if not attrs then return nil, err, errno end
  if type(what) == "string" then return attrs[what] end
  if type(what) == "table" then
    for k, v in pairs(attrs) do what[k] = v end
    return what
  end
  return attrs
end
M.symlinkattributes = M.attributes

local function readonly(path)
  return nil, ("%s: Read-only file system (a replay writes no file)"):format(tostring(path)), 30
end
M.touch, M.link = readonly, readonly
M.mkdir = function(path) return H("fs_mkdir", path) end
M.rmdir = function(path) return H("fs_rmdir", path) end
M.chdir = function(path) return nil, ("%s: changing folder is not emulated by broker"):format(tostring(path)) end

--- An iterator over a folder's entries, raising for one it cannot open as LuaFileSystem does.
M.dir = function(path)
  local names, err = H("fs_list", path)
  if not names then error(err, 2) end
  local i = 0
  local d = {}
  d.next = function() i = i + 1 return names[i] end
  d.close = function() i = #names end
  return function() i = i + 1 return names[i] end, d
end

M.currentdir = function() return (H("fs_cwd")) end
M.setmode = function() return true, "binary" end
M.lock = function() return nil, "locks are not emulated" end
M.unlock = M.lock
M.lock_dir = function() return nil, "locks are not emulated" end

return M
