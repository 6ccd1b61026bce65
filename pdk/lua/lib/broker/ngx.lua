-- The ngx global as Kong plugins use it, on the kit's request state (written for broker).
local H = __host
local R = require "broker.request"
local unsupported = require "broker.unsupported"
local null = H("null")
local type, tostring, select = type, tostring, select

local ngx = {
  null = null,
  OK = 0, ERROR = -1, AGAIN = -2, DONE = -4, DECLINED = -5,
  STDERR = 0, EMERG = 1, ALERT = 2, CRIT = 3, ERR = 4, WARN = 5, NOTICE = 6, INFO = 7, DEBUG = 8,
  HTTP_GET = 2, HTTP_HEAD = 4, HTTP_POST = 8, HTTP_PUT = 16, HTTP_DELETE = 32, HTTP_MKCOL = 64,
  HTTP_COPY = 128, HTTP_MOVE = 256, HTTP_OPTIONS = 512, HTTP_PROPFIND = 1024, HTTP_PROPPATCH = 2048,
  HTTP_LOCK = 4096, HTTP_UNLOCK = 8192, HTTP_PATCH = 16384, HTTP_TRACE = 32768,
  HTTP_CONTINUE = 100, HTTP_SWITCHING_PROTOCOLS = 101, HTTP_OK = 200, HTTP_CREATED = 201,
  HTTP_ACCEPTED = 202, HTTP_NO_CONTENT = 204, HTTP_PARTIAL_CONTENT = 206, HTTP_SPECIAL_RESPONSE = 300,
  HTTP_MOVED_PERMANENTLY = 301, HTTP_MOVED_TEMPORARILY = 302, HTTP_SEE_OTHER = 303, HTTP_NOT_MODIFIED = 304,
  HTTP_TEMPORARY_REDIRECT = 307, HTTP_PERMANENT_REDIRECT = 308, HTTP_BAD_REQUEST = 400,
  HTTP_UNAUTHORIZED = 401, HTTP_PAYMENT_REQUIRED = 402, HTTP_FORBIDDEN = 403, HTTP_NOT_FOUND = 404,
  HTTP_NOT_ALLOWED = 405, HTTP_NOT_ACCEPTABLE = 406, HTTP_REQUEST_TIMEOUT = 408, HTTP_CONFLICT = 409,
  HTTP_GONE = 410, HTTP_UPGRADE_REQUIRED = 426, HTTP_TOO_MANY_REQUESTS = 429, HTTP_CLOSE = 444,
  HTTP_ILLEGAL = 451, HTTP_INTERNAL_SERVER_ERROR = 500, HTTP_METHOD_NOT_IMPLEMENTED = 501,
  HTTP_BAD_GATEWAY = 502, HTTP_SERVICE_UNAVAILABLE = 503, HTTP_GATEWAY_TIMEOUT = 504,
  HTTP_VERSION_NOT_SUPPORTED = 505, HTTP_INSUFFICIENT_STORAGE = 507,
}
local METHODS = {}
for k, v in pairs(ngx) do
  local m = type(k) == "string" and k:match("^HTTP_(%u+)$")
  if m and v >= 2 and v <= 32768 and v & (v - 1) == 0 then METHODS[v] = m end
end

-- codecs and digests
ngx.encode_base64 = function(s, no_padding) return (H("encode_base64", s, no_padding)) end
ngx.decode_base64 = function(s) return (H("decode_base64", s)) end
ngx.md5 = function(s) return require("resty.string").to_hex(H("digest", "md5", s)) end
ngx.md5_bin = function(s) return (H("digest", "md5", s)) end
ngx.sha1_bin = function(s) return (H("digest", "sha1", s)) end
ngx.hmac_sha1 = function(key, s) return (H("hmac", "sha1", key, s)) end
ngx.crc32_short = function(s) return (H("crc32", s)) end
ngx.crc32_long = ngx.crc32_short
ngx.escape_uri = function(s) return (H("escape_uri", s)) end
ngx.unescape_uri = function(s) return (H("unescape_uri", s)) end
ngx.encode_args = function(t) return (H("encode_args", t)) end
ngx.decode_args = function(s, max) return (H("decode_args", s, max)) end
ngx.quote_sql_str = function(s) return "'" .. tostring(s):gsub("\\", "\\\\"):gsub("'", "\\'") .. "'" end

-- time
ngx.now = function() return (H("now")) end
ngx.time = function() return math.floor(H("now")) end
ngx.update_time = function() end
ngx.today = function() return (H("localtime")):sub(1, 10) end
ngx.localtime = function() return (H("localtime")) end
ngx.utctime = function() return (H("utctime")) end
ngx.http_time = function(sec) return (H("http_time", sec)) end
ngx.cookie_time = function(sec) return (H("cookie_time", sec)) end
ngx.parse_http_time = function(s) return (H("parse_http_time", s)) end
-- nothing waits: a virtual clock (a spec's, a fixture's `time`) moves on by the seconds slept
ngx.sleep = function(sec)
  if type(sec) ~= "number" or sec < 0 then error("bad argument #1 to 'sleep' (invalid sleep time)", 2) end
  H("sleep", sec)
end
-- os.time() and os.date() without a time read the clock ngx.now reads
local os_time, os_date = os.time, os.date
os.time = function(t) if t == nil then return math.floor(H("now")) end return os_time(t) end
os.date = function(format, t) return os_date(format, t or math.floor(H("now"))) end
ngx.get_phase = function() return __broker_loading and "init" or (H("phase")) end -- boot.lua: loading is init

-- logging goes to the kit's log, at the matching level
local LEVELS = { [0] = "emerg", "emerg", "alert", "crit", "err", "warn", "notice", "info", "debug" }
ngx.log = function(level, ...)
  local parts = {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    parts[i] = v == nil and "nil" or v == null and "null" or tostring(v)
  end
  return require("broker.kong").log[LEVELS[level] or "notice"](table.concat(parts))
end
-- OpenResty's print is ngx.log(ngx.NOTICE, ...): a line in the error log, never the output
print = function(...) return ngx.log(ngx.NOTICE, ...) end

-- ngx.exit: Kong's error page for an error status, the phase's end otherwise; once the plugin
-- has printed, the answer is what it printed and exit only ends the phase
ngx.exit = function(status)
  if H("ngx_headers_sent") then
    H("ngx_end_phase")
    return coroutine.yield(R.EXIT)
  end
  if status >= 400 then return kong.response.error(status) end
  if status >= 200 then return kong.response.exit(status) end
  return coroutine.yield(R.EXIT)
end
ngx.redirect = function(uri, status)
  return kong.response.exit(status or 302, nil, { Location = uri })
end
-- output from rewrite / access: the first print sends the headers, the plugin answers the request
local null_text = "null"
local function flatten(parts, v)
  local t = type(v)
  if t == "table" then
    if v == null then parts[#parts + 1] = null_text return end
    for i = 1, #v do flatten(parts, v[i]) end
  elseif t == "nil" then parts[#parts + 1] = "nil"
  elseif t == "boolean" then parts[#parts + 1] = v and "true" or "false"
  elseif t == "string" or t == "number" then parts[#parts + 1] = tostring(v)
  else error("bad argument #1 to 'print' (string, number, boolean, nil, ngx.null, or array table expected, got " .. t .. ")", 3) end
end
local function output(name, newline, ...)
  local parts = {}
  for i = 1, select("#", ...) do flatten(parts, (select(i, ...))) end
  if newline then parts[#parts + 1] = "\n" end
  return H("ngx_print", table.concat(parts), name)
end
ngx.print = function(...) return output("ngx.print", false, ...) end
ngx.say = function(...) return output("ngx.say", true, ...) end
ngx.flush = function() return H("ngx_flush") end
ngx.eof = function() return H("ngx_eof") end
ngx.send_headers = function() return H("ngx_send_headers") end
ngx.exec = function(uri)
  error("ngx.exec (an internal redirect to " .. tostring(uri) .. ") is not emulated by broker: a replay has no nginx locations", 2)
end
ngx.on_abort = function() return true end

ngx.var = setmetatable({}, {
  __index = function(_, k) return (H("var_get", k)) end,
  __newindex = function(_, k, v) H("var_set", k, v) end,
})

-- nginx's lua_transform_underscores_in_response_headers (on by default): ngx.header.x_foo is X-Foo
local function header_name(k) return type(k) == "string" and (k:gsub("_", "-")) or k end
ngx.header = setmetatable({}, {
  __index = function(_, k) return (H("resp_header_get", header_name(k))) end,
  __newindex = function(_, k, v) H("resp_header_set", header_name(k), v) end,
})

local header_mt = require("broker.kong").header_mt
-- Writes to the request the service receives: through the kit (its checks, the same upstream
-- request) or the host, and in the trace under the ngx name the plugin called.
local kit_as = require("broker.kong").kit_as
local req_set_header = kit_as("ngx.req.set_header", "service.request.set_header")
local req_unset_header = kit_as("ngx.req.set_header", "service.request.clear_header")
local req_clear_header = kit_as("ngx.req.clear_header", "service.request.clear_header")
local req_set_method = kit_as("ngx.req.set_method", "service.request.set_method")
local req_set_body = kit_as("ngx.req.set_body_data", "service.request.set_raw_body")
ngx.req = {
  -- raw: names as the client sent them, and no lookup in any case (OpenResty's raw table)
  get_headers = function(max, raw)
    local t = H("req_headers", max, raw == true)
    if raw == true then return t end
    return setmetatable(t, header_mt)
  end,
  set_header = function(k, v)
    if v == nil then return req_unset_header(k) end
    return req_set_header(k, v)
  end,
  clear_header = function(k) return req_clear_header(k) end,
  get_method = function() return (H("upstream")) end,
  set_method = function(m) return req_set_method(METHODS[m] or m) end,
  http_version = function() return select(4, H("upstream")) end,
  start_time = function() return (H("start_time")) end,
  read_body = function() end,
  discard_body = function() end,
  get_body_file = function() return nil end,
  get_body_data = function()
    local body = select(2, H("upstream"))
    if body == "" then return nil end
    return body
  end,
  set_body_data = function(s) return req_set_body(s) end,
  -- resty.core's get_uri_args counts max as arguments kept, not as parts (ngx.decode_args), and says
  -- "truncated" as a second value when max left some out
  get_uri_args = function(max) return H("decode_args", select(3, H("upstream")), max, "args") end,
  set_uri_args = function(args)
    if type(args) == "table" then args = ngx.encode_args(args) end
    H("var_set", "args", args, "ngx.req.set_uri_args")
  end,
  get_post_args = function(max)
    local body = select(2, H("upstream"))
    return ngx.decode_args(body or "", max)
  end,
  set_uri = function(uri, jump) H("set_uri", uri, jump) end,
  is_internal = function() return false end,
  raw_header = function(no_request_line) return (H("raw_header", no_request_line)) end,
  socket = function() return unsupported("ngx.socket", "ngx.req.socket") end,
}
-- OpenResty functions broker does not write: each names itself rather than being a nil to call
local function unwritten(name, instead)
  return function() error(name .. " is not emulated by broker" .. (instead and " (" .. instead .. ")" or ""), 2) end
end
ngx.req.set_body_file = unwritten("ngx.req.set_body_file", "use ngx.req.set_body_data")
ngx.req.init_body = unwritten("ngx.req.init_body", "use ngx.req.set_body_data")
ngx.req.append_body = unwritten("ngx.req.append_body", "use ngx.req.set_body_data")
ngx.req.finish_body = unwritten("ngx.req.finish_body", "use ngx.req.set_body_data")
ngx.is_subrequest = false
ngx.run_worker_thread = unwritten("ngx.run_worker_thread", "a replay has no thread pool")
-- raw: names as they were set, and no lookup in any case (OpenResty's raw table)
ngx.resp = { get_headers = function(max, raw)
  local t = H("resp_headers", max, raw == true)
  if raw == true then return t end
  return setmetatable(t, header_mt)
end }

ngx.re = require "ngx.re"
ngx.worker = {
  id = function() return 0 end, count = function() return 1 end, pid = function() return H("pid") end,
  exiting = function() return false end,
}
ngx.config = {
  subsystem = "http", debug = false, is_console = false, ngx_lua_version = 10026, nginx_version = 1025003,
  prefix = function() return "/usr/local/kong/" end, nginx_configure = function() return "" end,
}
-- timers never fire in a replay: a scenario is one request
ngx.timer = {
  at = function() return true end, every = function() return true end,
  running_count = function() return 0 end, pending_count = function() return 0 end,
}
ngx.shared = require "broker.shdict"
ngx.location = {
  capture = function() error("ngx.location.capture is not emulated by broker", 2) end,
  capture_multi = function() error("ngx.location.capture_multi is not emulated by broker", 2) end,
}
-- ngx.socket.tcp & co. may be kept in locals at load (kong.reports does); calling one fails the fixture
ngx.socket = setmetatable({}, { __index = function(_, k)
  if type(k) ~= "string" then return nil end
  return function() return unsupported("ngx.socket", "ngx.socket." .. k) end
end })
ngx.thread = {
  spawn = function() error("ngx.thread is not emulated by broker", 2) end,
  wait = function() error("ngx.thread is not emulated by broker", 2) end,
  kill = function() error("ngx.thread is not emulated by broker", 2) end,
}

setmetatable(ngx, {
  __index = function(_, k)
    if k == "ctx" then return R.current.ngx end
    if k == "status" then return (H("status_get")) end
    if k == "arg" then return R.arg end
    if k == "headers_sent" then return (H("ngx_headers_sent")) end
  end,
  __newindex = function(t, k, v)
    if k == "status" then return H("status_set", v) end
    if k == "ctx" then R.current.ngx = v return end
    rawset(t, k, v)
  end,
})

return ngx
