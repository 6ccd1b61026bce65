-- kong.pdk.node for `broker pdk test` (written for broker): specs build Kong's node module themselves
-- (statsd's: `require("kong.pdk.node").new().get_hostname`); `new()` is the kit's kong.node, read when called,
-- so the spec's and the plugins' answers are the same. Kong's own file needs LuaJIT's FFI.
local M = {}

--- The kit's kong.node: each function looked up on the call, as a spec may hold one before Kong starts.
function M.new()
  return setmetatable({}, { __index = function(_, name)
    if type(kong) ~= "table" or type(kong.node) ~= "table" or kong.node[name] == nil then
      error("kong.pdk.node: kong.node." .. tostring(name) .. " is not emulated by broker", 2)
    end
    return function(...) return kong.node[name](...) end
  end })
end

return M
