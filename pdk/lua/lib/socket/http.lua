-- LuaSocket's socket.http (written for broker from its documented API): requests answered from the
-- fixture's `outbound`, as resty.http's are. The simple form request(url [, body]) answers body,
-- code, headers, status; the generic form request{ url, method, headers, source, sink } answers 1,
-- code, headers, status; a failure answers nil, err.
local H = __host
local ltn12 = require "ltn12"
local url = require "socket.url"
local unsupported = require "broker.unsupported"

local function make(module, default_port)
  local M = { TIMEOUT = 60, USERAGENT = "LuaSocket 3.1.0", PORT = default_port }

  local function send(reqt)
    if not H("http_enabled") then return unsupported(module, module .. ".request") end
    local parsed = url.parse(reqt.url or "")
    if not parsed or not parsed.host then return nil, "invalid url: " .. tostring(reqt.url) end
    local body
    if reqt.source then
      local parts = {}
      ltn12.pump.all(reqt.source, (ltn12.sink.table(parts)))
      body = table.concat(parts)
    end
    local headers, seen = {}, {}
    for k, v in pairs(reqt.headers or {}) do headers[k] = v; seen[k:lower()] = true end
    if not seen["user-agent"] then headers["user-agent"] = M.USERAGENT end
    if not seen.host then headers.host = parsed.host .. (parsed.port and ":" .. parsed.port or "") end
    if not seen.te then headers.te = "trailers" end
    if not seen.connection then headers.connection = "close, TE" end
    local status, reason, res_headers, res_body = H("http_send", module .. ".request", reqt.method or "GET", reqt.url,
      headers, body)
    if status == false then error(reason, 3) end
    if status == nil then return nil, reason end
    local lower = {}
    for k, v in pairs(res_headers or {}) do
      lower[k:lower()] = type(v) == "table" and table.concat(v, ", ") or v
    end
    if reqt.sink and res_body and res_body ~= "" then
      ltn12.pump.all(ltn12.source.string(res_body), reqt.sink)
    end
    return 1, status, lower, "HTTP/1.1 " .. status .. " " .. (reason or ""), res_body
  end

  function M.request(reqt, body)
    if type(reqt) == "table" then
      local one, code, headers, status = send(reqt)
      if not one then return nil, code end
      return one, code, headers, status
    end
    local t = { url = reqt, method = body and "POST" or "GET" }
    if body then
      t.source = ltn12.source.string(body)
      t.headers = { ["content-type"] = "application/x-www-form-urlencoded", ["content-length"] = tostring(#body) }
    end
    local one, code, headers, status, res_body = send(t)
    if not one then return nil, code end
    return res_body or "", code, headers, status
  end

  return M
end

return setmetatable({ _make = make }, { __index = make("socket.http", 80) })
