-- The nginx configuration in Kong's prefix, as a spec reads it (written for broker). Kong runs in process
-- with no nginx and writes no prefix; a spec that reads servroot/nginx.conf (statsd's counts the
-- lua_shared_dict lines, following `include`s) reads one made from what the Kong in process has: the
-- shared dictionaries ngx.shared holds, as Kong's template declares them.
local M = {}

local function dicts()
  local names = {}
  for name in pairs(ngx.shared) do names[#names + 1] = name end
  table.sort(names)
  local out = {}
  for i, name in ipairs(names) do
    out[i] = ("lua_shared_dict %-27s %dk;"):format(name, math.floor(ngx.shared[name]:capacity() / 1024))
  end
  return table.concat(out, "\n")
end

local HEADER = "# written by broker pdk test: Kong runs in process, with no nginx; what a spec reads of its configuration\n"
local FILES = {
  ["nginx.conf"] = function()
    return HEADER .. "pid pids/nginx.pid;\nerror_log logs/error.log debug;\n\ninclude 'nginx-inject.conf';\n\n"
      .. "events {\n}\n\nhttp {\n    include 'nginx-kong.conf';\n}\n"
  end,
  ["nginx-inject.conf"] = function() return HEADER end,
  ["nginx-kong-inject.conf"] = function() return HEADER end,
  ["nginx-kong.conf"] = function()
    return HEADER .. "server_tokens off;\n\nerror_log logs/error.log debug;\n\ninclude 'nginx-kong-inject.conf';\n\n"
      .. dicts() .. "\n\nunderscores_in_headers on;\n"
  end,
}

--- The text of a prefix file this module makes, or nil when `path` names none of them.
function M.text(path)
  if type(path) ~= "string" then return nil end
  local name = path:match("^%./?servroot/([%w%-]+%.conf)$") or path:match("^servroot/([%w%-]+%.conf)$")
    or path:match("/servroot/([%w%-]+%.conf)$")
  local make = name and FILES[name]
  return make and make() or nil
end

return M
