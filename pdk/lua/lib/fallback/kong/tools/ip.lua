-- kong.tools.ip, for a plugin run without a Kong checkout on lua_path (Kong's own file wins when one
-- is there). Written for broker from Kong 3.x's documented behaviour; the host parses addresses.
local H = __host
local unwritten = require "broker.unwritten"
local M = {}

local function kind(ip) return type(ip) == "string" and (H("ip_parse", ip)) or nil end
local function cidr(c, want)
  if type(c) ~= "string" then return false end
  local ip, bits = c:match("^([^/]+)/(%d+)$")
  if not ip or kind(ip) ~= want then return false end
  return tonumber(bits) <= (want == "ipv4" and 32 or 128)
end

function M.is_valid_ipv4(ip) return kind(ip) == "ipv4" end
function M.is_valid_ipv6(ip) return kind(ip) == "ipv6" end
function M.is_valid_ip(ip) return kind(ip) ~= nil end
function M.is_valid_cidr_v4(c) return cidr(c, "ipv4") end
function M.is_valid_cidr_v6(c) return cidr(c, "ipv6") end
function M.is_valid_cidr(c) return cidr(c, "ipv4") or cidr(c, "ipv6") end
function M.is_valid_ip_or_cidr_v4(v) return M.is_valid_ipv4(v) or M.is_valid_cidr_v4(v) end
function M.is_valid_ip_or_cidr_v6(v) return M.is_valid_ipv6(v) or M.is_valid_cidr_v6(v) end
function M.is_valid_ip_or_cidr(v) return M.is_valid_ip(v) or M.is_valid_cidr(v) end

--- "ipv4", "ipv6" or "name", by exclusion (not validation), as Kong decides it.
function M.hostname_type(name)
  local rest, colons = name:gsub(":", "")
  if colons > 1 then return "ipv6" end
  if rest:match("^[%d%.]+$") then return "ipv4" end
  return "name"
end

for _, name in ipairs { "normalize_ipv4", "normalize_ipv6", "check_hostname", "normalize_ip", "format_host" } do
  M[name] = unwritten("kong.tools.ip." .. name)
end

return M
