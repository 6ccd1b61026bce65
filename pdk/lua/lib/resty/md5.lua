-- resty.md5: a digest object (new, update, final, reset) on the host's md5 (written for broker).
local H = __host
local M = { _VERSION = "0.16" }
M.__index = M
function M.new(self) return setmetatable({ parts = {} }, M) end
function M:update(s) self.parts[#self.parts + 1] = s return true end
function M:final() return (H("digest", "md5", table.concat(self.parts))) end
function M:reset() self.parts = {} return true end
return M
