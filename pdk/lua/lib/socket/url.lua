-- socket.url: LuaSocket's URL module (RFC 3986 parsing, escaping), which cors parses its origins
-- with. Written for broker from the documented behaviour: parse(url, default) returns a table of
-- scheme, authority, userinfo, user, password, host, port, path, params, query, fragment.
local M = { _VERSION = "socket.url (broker emulation)" }

function M.escape(s)
  return (string.gsub(s, "([^A-Za-z0-9_])", function(c) return string.format("%%%02x", string.byte(c)) end))
end

function M.unescape(s)
  return (string.gsub(s, "%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

function M.parse(url, default)
  local parsed = {}
  for k, v in pairs(default or parsed) do parsed[k] = v end
  if not url or url == "" then return nil, "invalid url" end
  url = string.gsub(url, "#(.*)$", function(f) parsed.fragment = f; return "" end)
  url = string.gsub(url, "^([%w][%w%+%-%.]*)%:", function(s) parsed.scheme = string.lower(s); return "" end)
  url = string.gsub(url, "^//([^/]*)", function(a) parsed.authority = a; return "" end)
  url = string.gsub(url, "%?(.*)", function(q) parsed.query = q; return "" end)
  url = string.gsub(url, "%;(.*)", function(p) parsed.params = p; return "" end)
  if url ~= "" then parsed.path = url end
  local authority = parsed.authority
  if not authority then return parsed end
  authority = string.gsub(authority, "^([^@]*)@", function(u) parsed.userinfo = u; return "" end)
  authority = string.gsub(authority, ":([^:%]]*)$", function(p) parsed.port = p; return "" end)
  if authority ~= "" then
    parsed.host = string.match(authority, "^%[(.+)%]$") or authority
  end
  local userinfo = parsed.userinfo
  if userinfo then
    userinfo = string.gsub(userinfo, ":([^:]*)$", function(p) parsed.password = p; return "" end)
    parsed.user = userinfo
  end
  return parsed
end

function M.build(t)
  local url = t.path or ""
  if t.params then url = url .. ";" .. t.params end
  if t.query then url = url .. "?" .. t.query end
  local authority = t.authority
  if t.host then
    authority = string.find(t.host, ":", 1, true) and ("[" .. t.host .. "]") or t.host
    if t.port then authority = authority .. ":" .. t.port end
    local userinfo = t.userinfo
    if t.user then userinfo = t.user .. (t.password and (":" .. t.password) or "") end
    if userinfo then authority = userinfo .. "@" .. authority end
  end
  if authority then url = "//" .. authority .. url end
  if t.scheme then url = t.scheme .. ":" .. url end
  if t.fragment then url = url .. "#" .. t.fragment end
  return url
end

return M
