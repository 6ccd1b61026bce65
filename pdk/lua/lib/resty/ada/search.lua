-- resty.ada.search (lua-resty-ada's query-string functions), written for broker on Node's
-- URLSearchParams, which follows the same WHATWG rules as ada: each function takes a query string
-- (a leading "?" is ignored) and answers a value, or the new query string for the ones that change
-- it (Kong's kong.service.request.clear_query_arg removes an argument with `remove`).
local H = __host
local M = {}

-- a wrong argument raises the library's assert message, without a position
local function str(v, what)
  if type(v) ~= "string" then error("invalid " .. what, 0) end
  return v
end

local ONE = { "size", "sort", "tostring" }
local KEY = { "has", "get", "get_all", "remove" }
local KEY_VALUE = { "has_value", "set", "append", "remove_value" }
for _, op in ipairs(ONE) do
  M[op] = function(query) return (H("ada_search", op, str(query, "search"))) end
end
for _, op in ipairs(KEY) do
  M[op] = function(query, key) return (H("ada_search", op, str(query, "search"), str(key, "key"))) end
end
for _, op in ipairs(KEY_VALUE) do
  M[op] = function(query, key, value)
    return (H("ada_search", op, str(query, "search"), str(key, "key"), str(value, "value")))
  end
end

-- a parsed query: the same functions as methods, the ones that change it keeping the new string
local mt = {}
mt.__index = mt
for _, op in ipairs({ "size", "has", "get", "get_all", "has_value" }) do
  mt[op] = function(self, ...) return M[op](self.query, ...) end
end
for _, op in ipairs({ "sort", "remove", "set", "append", "remove_value" }) do
  mt[op] = function(self, ...)
    self.query = M[op](self.query, ...)
    return self
  end
end
function mt:tostring() return M.tostring(self.query) end
mt.__tostring = mt.tostring
function mt:__len() return M.size(self.query) end

--- A parsed query string.
function M.parse(query) return setmetatable({ query = str(query, "search") }, mt) end

return M
