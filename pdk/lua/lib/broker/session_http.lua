-- What broker's resty.session reads from the request and writes to the request and the response: its
-- cookies (Set-Cookie with the configured attributes, kept beside the other cookies a response sets), the
-- request's Cookie header without them, and the Session-* headers. Written for broker from
-- lua-resty-session 4's documented options.
local concat, insert = table.concat, table.insert

local M = {}

--- a request cookie's value, or nil
function M.cookie(name)
  local v = ngx.var["cookie_" .. name]
  if v == nil or v == "" then return nil end
  return v
end

local EXPIRED = "Thu, 01 Jan 1970 00:00:01 GMT"

--- the Set-Cookie value for a cookie: `max_age` nil for a session cookie, 0 to remove it
function M.set_cookie_value(conf, name, value, max_age)
  local parts = { name .. "=" .. (value or "") }
  local prefix = conf.cookie_prefix
  insert(parts, "Path=" .. (prefix == "__Host-" and "/" or conf.cookie_path))
  if conf.cookie_domain and prefix ~= "__Host-" then insert(parts, "Domain=" .. conf.cookie_domain) end
  if conf.cookie_same_site and conf.cookie_same_site ~= "Default" then
    insert(parts, "SameSite=" .. conf.cookie_same_site)
  end
  if conf.cookie_secure or prefix == "__Host-" or prefix == "__Secure-" then insert(parts, "Secure") end
  if conf.cookie_http_only then insert(parts, "HttpOnly") end
  if max_age == 0 then
    insert(parts, "Expires=" .. EXPIRED)
    insert(parts, "Max-Age=0")
  elseif max_age then
    insert(parts, "Expires=" .. ngx.cookie_time(ngx.time() + max_age))
    insert(parts, "Max-Age=" .. max_age)
  end
  if conf.cookie_priority then insert(parts, "Priority=" .. conf.cookie_priority) end
  if conf.cookie_partitioned then insert(parts, "Partitioned") end
  if conf.cookie_same_party then insert(parts, "SameParty") end
  return concat(parts, "; ")
end

local function named(cookie, name)
  return type(cookie) == "string" and cookie:sub(1, #name + 1) == name .. "="
end

--- adds a Set-Cookie to the response, replacing one this response already sets for the same name
function M.set_cookie(conf, name, value, max_age)
  local existing = ngx.header["Set-Cookie"]
  local list = {}
  if type(existing) == "table" then
    for _, c in ipairs(existing) do
      if not named(c, name) then list[#list + 1] = c end
    end
  elseif existing and not named(existing, name) then
    list[1] = existing
  end
  list[#list + 1] = M.set_cookie_value(conf, name, value, max_age)
  ngx.header["Set-Cookie"] = #list == 1 and list[1] or list
end

--- removes the named cookies from the request's Cookie header(s), so the service does not get them
function M.clear_request_cookies(names)
  local header = ngx.req.get_headers()["Cookie"]
  if header == nil then return true end
  if type(header) == "table" then header = concat(header, "; ") end
  local drop = {}
  for _, n in ipairs(names) do drop[n] = true end
  local kept = {}
  for pair in header:gmatch("[^;]+") do
    local trimmed = pair:match("^%s*(.-)%s*$")
    local n = trimmed:match("^([^=]+)")
    if trimmed ~= "" and not (n and drop[n]) then kept[#kept + 1] = trimmed end
  end
  ngx.req.set_header("Cookie", #kept > 0 and concat(kept, "; ") or nil)
  return true
end

local HEADERS = {
  id = "Session-Id",
  audience = "Session-Audience",
  subject = "Session-Subject",
  timeout = "Session-Timeout",
  ["idling-timeout"] = "Session-Idling-Timeout",
  ["rolling-timeout"] = "Session-Rolling-Timeout",
  ["absolute-timeout"] = "Session-Absolute-Timeout",
}
M.HEADERS = HEADERS

--- sets `Session-<Name>` headers from the properties named (request or response); nil, err for an unknown name
function M.set_headers(to_request, names, property)
  for _, n in ipairs(names) do
    local header = HEADERS[n]
    if not header then return nil, "invalid session header name \"" .. tostring(n) .. "\"" end
    local v = property(n)
    if v ~= nil then
      v = tostring(v)
      if to_request then ngx.req.set_header(header, v) else ngx.header[header] = v end
    end
  end
  return true
end

--- the request values a session is bound to (`bind`), one string for the MAC
function M.bound(bind)
  if not bind or #bind == 0 then return nil end
  local out = {}
  for _, b in ipairs(bind) do
    local v
    if b == "ip" then v = ngx.var.remote_addr
    elseif b == "scheme" then v = ngx.var.scheme
    elseif b == "user-agent" then v = ngx.var.http_user_agent
    else error("resty.session: invalid bind \"" .. tostring(b) .. "\" (use ip, scheme or user-agent)", 3) end
    out[#out + 1] = b .. "=" .. (v or "")
  end
  return concat(out, "\0")
end

return M
