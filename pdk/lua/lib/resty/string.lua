-- resty.string: to_hex and atoi (written for broker).
local M = { _VERSION = "0.16" }
function M.to_hex(s)
  return (tostring(s):gsub(".", function(c) return string.format("%02x", c:byte()) end))
end
function M.atoi(s) return tonumber(s) end
return M
