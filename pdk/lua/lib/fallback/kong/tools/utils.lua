-- kong.tools.utils, for a plugin run without a Kong checkout on lua_path (Kong's own file wins when
-- one is there): as in Kong 3.x, the functions of its seven tools modules under one table.
local M = {}
for _, name in ipairs { "kong.tools.table", "kong.tools.uuid", "kong.tools.rand", "kong.tools.time",
  "kong.tools.string", "kong.tools.ip", "kong.tools.http" } do
  for k, v in pairs(require(name)) do M[k] = v end
end
return M
