-- lua_system_constants (a C module of Kong's build, written for broker): the rock's open(2) flags and mode
-- bits, each a function answering the number of Linux on x86-64, the system Kong runs on; ffi.C.open
-- (ffi.lua) takes them in those numbers whatever the host.
local function const(n) return function() return n end end

return {
  O_RDONLY = const(0),
  O_WRONLY = const(1),
  O_CREAT = const(64),
  O_APPEND = const(1024),
  S_IRUSR = const(256),
  S_IWUSR = const(128),
  S_IXUSR = const(64),
  S_IRGRP = const(32),
  S_IWGRP = const(16),
  S_IXGRP = const(8),
  S_IROTH = const(4),
  S_IWOTH = const(2),
  S_IXOTH = const(1),
}
