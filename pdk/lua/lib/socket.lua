-- LuaSocket's `socket` (C in Kong's runtime; written for broker): the clock (`gettime`, `sleep`) and
-- the version; making a socket (`tcp`, `udp`, `connect`, `bind`, …) stops the run naming it, as a
-- replay opens no connection. As under LuaJIT, requiring it also sets the global `socket`.
local H = __host
local unsupported = require "broker.unsupported"
local M = { _VERSION = "LuaSocket 3.1.0", _DEBUG = false }

function M.gettime() return (H("now")) end
function M.sleep(sec) if type(sec) == "number" and sec > 0 then H("sleep", sec) end end
function M.skip(d, ...) return select(d + 1, ...) end

setmetatable(M, { __index = function(_, k)
  if type(k) ~= "string" or k:sub(1, 1) == "_" then return nil end
  return function() return unsupported("socket", "socket." .. k) end
end })

socket = M
return M
