-- resty.jit-uuid: v4 UUIDs and their check (written for broker).
local H = __host
local M = { _VERSION = "0.0.7" }
function M.seed() return true end
function M.generate_v4() return (H("uuid")) end
function M.is_valid(s)
  return type(s) == "string" and s:match("^%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x$") ~= nil
end
setmetatable(M, { __call = function() return M.generate_v4() end })
return M
