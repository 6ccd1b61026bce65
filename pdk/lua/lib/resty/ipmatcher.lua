-- resty.ipmatcher: IPv4 and IPv6 addresses and CIDR ranges matched by the host (written for broker).
local H = __host
local M = { _VERSION = "0.6.1" }
M.__index = M

local function build(list, with_value)
  local cidrs, values = {}, {}
  if with_value then
    for k, v in pairs(list) do
      if not H("ip_valid_cidr", k) then return nil, "invalid ip address: " .. tostring(k) end
      cidrs[#cidrs + 1] = k
      values[k] = v
    end
  else
    for _, ip in ipairs(list) do
      if not H("ip_valid_cidr", ip) then return nil, "invalid ip address: " .. tostring(ip) end
      cidrs[#cidrs + 1] = ip
    end
  end
  return setmetatable({ cidrs = setmetatable(cidrs, __broker_array_mt), values = with_value and values }, M)
end

function M.new(list) return build(list or {}, false) end
function M.new_with_value(list) return build(list or {}, true) end

function M:match(ip)
  if not H("ip_parse", ip) then return false, "invalid ip address: " .. tostring(ip) end
  local hit = H("ip_match", ip, self.cidrs)
  if not hit then return false end
  if self.values then return self.values[hit] end
  return true
end

function M:match_bin(bin)
  local ip
  if #bin == 4 then
    ip = string.format("%d.%d.%d.%d", bin:byte(1, 4))
  elseif #bin == 16 then
    local parts = {}
    for i = 1, 16, 2 do parts[#parts + 1] = string.format("%x", bin:byte(i) * 256 + bin:byte(i + 1)) end
    ip = table.concat(parts, ":")
  else
    return nil, "invalid binary ip address"
  end
  return self:match(ip)
end

function M.parse_ipv4(ip) local kind = H("ip_parse", ip) return kind == "ipv4" end
function M.parse_ipv6(ip) local kind = H("ip_parse", ip) return kind == "ipv6" end

return M
