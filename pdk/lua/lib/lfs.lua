-- A stand-in for LuaFileSystem, written for broker. Penlight's pl.path requires `lfs` when it loads,
-- and request-size-limiting asks it for a buffered body file's size. A replayed plugin has no files
-- of its own (bodies stay in memory), so nothing here reads the host's disk: every question about a
-- path gets the `nil, message` a missing file gets.
local stand_in = { _VERSION = "LuaFileSystem (broker emulation)" }

local function no_such(path)
  return nil, tostring(path) .. ": No such file or directory (broker does not emulate a filesystem)", 2
end

for _, name in ipairs({ "attributes", "symlinkattributes", "mkdir", "rmdir", "chdir", "touch", "link" }) do
  stand_in[name] = no_such
end

function stand_in.dir(path)
  error(select(2, no_such(path)), 2)
end

function stand_in.currentdir()
  return "/"
end

function stand_in.lock()
  return nil, "locks are not emulated"
end
stand_in.unlock = stand_in.lock

function stand_in.setmode()
  return true, "binary"
end

return stand_in
