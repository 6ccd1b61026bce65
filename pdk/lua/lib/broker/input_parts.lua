-- What resty.openssl's digest and mac objects share here: they keep the input given to update() and
-- hand it to node:crypto in one piece at final(). `methods(kind)` makes their update and reset.
local select, type = select, type
local M = {}

function M.methods(kind)
  local update = function(self, ...)
    for i = 1, select("#", ...) do
      local s = select(i, ...)
      if type(s) ~= "string" then return nil, kind .. ":update: expects a string at #" .. i .. ", got " .. type(s) end
      self.parts[#self.parts + 1] = s
    end
    return true
  end
  local reset = function(self)
    self.parts = {}
    return true
  end
  return update, reset
end

return M
