-- cjson.safe: cjson whose encode and decode answer nil, err instead of raising.
local cjson = require "cjson"
local M = setmetatable({}, { __index = cjson })
M.encode = function(v)
  local ok, out = pcall(cjson.encode, v)
  if ok then return out end
  return nil, (tostring(out):gsub("^[^:]*:%d+: ", ""))
end
M.decode = function(s)
  local ok, out = pcall(cjson.decode, s)
  if ok then return out end
  return nil, (tostring(out):gsub("^[^:]*:%d+: ", ""))
end
M.new = function() return M end
return M
