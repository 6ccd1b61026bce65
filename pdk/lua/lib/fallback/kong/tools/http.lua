-- kong.tools.http, for a plugin run without a Kong checkout on lua_path (Kong's own file wins when
-- one is there). Written for broker from Kong 3.x's documented behaviour.
local unwritten = require "broker.unwritten"
local M = {}

--- true for https, or (allow_terminated, from a trusted IP) an X-Forwarded-Proto of https.
function M.check_https(trusted_ip, allow_terminated)
  if ngx.var.scheme:lower() == "https" then return true end
  if not (allow_terminated and trusted_ip) then return false end
  local scheme = ngx.var.http_x_forwarded_proto
  if not scheme then return false end
  if scheme:find(",", 1, true) then return nil, "Only one X-Forwarded-Proto header allowed" end
  return scheme:lower() == "https"
end

--- An RFC 2616 token, or nil, err.
function M.validate_http_token(token)
  if token == nil or token == "" then return nil, "no token provided" end
  if not token:find("[%z\1-\31\127-\255 \t()<>@,;:\\\"/?={}%[%]]") then return token end
  return nil, "contains one or more invalid characters. ASCII control characters (0-31;127), space, tab and the " ..
    "characters ()<>@,;:\\\"/?={}[] are not allowed."
end
M.validate_cookie_name = M.validate_http_token

--- A header name of A-Z, a-z, 0-9, '_' and '-', or nil, err.
function M.validate_header_name(name)
  if name == nil or name == "" then return nil, "no header name provided" end
  if name:match("^[%w_%-]+$") then return name end
  return nil, "bad header name '" .. name .. "', allowed characters are A-Z, a-z, 0-9, '_', and '-'"
end

--- "public, max-age=3600" → { public = true, ["max-age"] = 3600 }.
function M.parse_directive_header(h)
  if not h then return require("kong.tools.table").EMPTY end
  if type(h) == "table" then h = table.concat(h, ", ") end
  local t = {}
  for part in h:gmatch("[^,]+") do
    local k, v = part:match("^%s*([^=]+)=(.+)")
    if not k then k = part:match("^%s*(.+)") end
    if k then t[k:lower()] = tonumber(v) or v or true end
  end
  return t
end

--- Seconds to keep a resource: s-maxage, max-age, else the Expires header sent; never below 0.
function M.calculate_resource_ttl(res_cc)
  local max_age = res_cc and (res_cc["s-maxage"] or res_cc["max-age"])
  if not max_age then
    local expires = ngx.var.sent_http_expires
    if type(expires) == "table" then expires = expires[#expires] end
    local t = ngx.parse_http_time(tostring(expires))
    if t then max_age = t - ngx.time() end
  end
  return max_age and math.max(max_age, 0) or 0
end

M.encode_args = function(args) return ngx.encode_args(args) end
M.decode_args = function(args) return ngx.decode_args(args) end

for _, name in ipairs { "get_default_exit_body", "get_response_type", "get_mime_type", "get_error_template",
  "get_header" } do
  M[name] = unwritten("kong.tools.http." .. name)
end

return M
