-- kong.tools.time (FFI and nginx's C in Kong; written for broker on the host's clock): Kong 3.x's
-- functions, with ngx.now's clock as the millisecond one.
local H = __host
local M = {}

-- nginx's time units (ngx_parse_time): a bare number is seconds
local UNITS = { y = 365 * 86400, M = 30 * 86400, w = 7 * 86400, d = 86400, h = 3600, m = 60, s = 1 }

--- "1h 30m", "10s", "2d" → seconds, as nginx reads a time in its configuration.
function M.nginx_conf_time_to_seconds(str)
  if type(str) ~= "string" or str == "" then error("bad argument #1 'str'", 2) end
  local total, pos, seen = 0, 1, {}
  while pos <= #str do
    local s, e, num, unit = str:find("^%s*(%d+)(%a*)%s*", pos)
    if not s or e < pos or (unit ~= "" and not UNITS[unit]) or seen[unit] then error("bad argument #1 'str'", 2) end
    seen[unit] = true
    total = total + tonumber(num) * (unit == "" and 1 or UNITS[unit])
    pos = e + 1
  end
  return total
end

function M.time_ns() return (H("time_ns")) end
function M.get_updated_now() ngx.update_time() return ngx.now() end
function M.get_now_ms() return ngx.now() * 1000 end
function M.get_updated_now_ms() ngx.update_time() return ngx.now() * 1000 end
function M.get_start_time_ms() return ngx.req.start_time() * 1000 end
function M.get_updated_monotonic_ms() return require("resty.core.time").monotonic_msec() end

return M
