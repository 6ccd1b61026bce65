-- Kong's assertion extensions for luassert (written for broker from Kong's spec docs):
-- assert.response(r) / assert.request(r) modifiers, and status, res_status, header, jsonbody,
-- queryparam, formparam, is_uuid. The request assertions read the mock upstream's echo.
local L = require "luassert"
local cjson = require "cjson.safe"
local lookup = require("broker.spec.client").lookup
local assert = L.assert

local function register(kind, name, fn, pos, neg) assert:register(kind, name, fn, pos, neg) end

-- Kong's error.log is not kept yet: a spec reading it fails, naming it
register("modifier", "logfile", function()
  require("broker.spec.client").raise("assert.logfile() is not emulated by broker yet: plugins' log lines are not kept for it")
end)

register("modifier", "response", function(state, args) rawset(state, "kong_response", args[1]) end)
register("modifier", "request", function(state, args) rawset(state, "kong_request", args[1]) end)

local function body_of(res)
  if type(res) ~= "table" or type(res.read_body) ~= "function" then
    error("expected a response of a spec.helpers client, got " .. type(res), 6)
  end
  return res:read_body()
end

-- the echoed request in a mock upstream answer
local function echoed(state)
  local res = rawget(state, "kong_request")
  local body = body_of(res)
  local json = cjson.decode(body)
  local powered = res.headers and res.headers["X-Powered-By"]
  if powered ~= "mock_upstream" or type(json) ~= "table" then
    rawset(state, "failure_message", "assert.request(): the response is not an echo of the mock upstream (X-Powered-By: "
      .. tostring(powered) .. "), so it shows no request. Body:\n" .. tostring(body))
    return nil
  end
  return json
end

local function msg(state, text) rawset(state, "failure_message", text) end

-- status(n): the response's status; returns its body
local function status(state, args)
  local expected, res = args[1], rawget(state, "kong_response") or args[2]
  local body = body_of(res)
  if res.status ~= expected then
    msg(state, ("Expected the response status to be %s, got %s. Body:\n%s"):format(tostring(expected), tostring(res.status), body))
    return false
  end
  msg(state, ("Expected the response status not to be %s"):format(tostring(expected)))
  return true, { body, n = 1 }
end
register("assertion", "status", status)
register("assertion", "res_status", status)

register("assertion", "header", function(state, args)
  local name = args[1]
  local req = rawget(state, "kong_request")
  local headers
  if req then
    local json = echoed(state)
    if not json then return false end
    headers = json.headers or {}
  else
    local res = rawget(state, "kong_response") or args[2]
    body_of(res)
    headers = res.headers or {}
  end
  local value = lookup(headers, name)
  local where = req and "request (as the mock upstream echoed it)" or "response"
  if value == nil then
    local names = {}
    for k in pairs(headers) do names[#names + 1] = tostring(k) end
    table.sort(names)
    msg(state, ("Expected the header '%s' in the %s; it has: %s"):format(name, where, table.concat(names, ", ")))
    return false
  end
  msg(state, ("Expected no header '%s' in the %s, got: %s"):format(name, where, tostring(value)))
  return true, { value, n = 1 }
end)

register("assertion", "jsonbody", function(state, args)
  local req = rawget(state, "kong_request")
  if req then
    local json = echoed(state)
    if not json then return false end
    local pd = json.post_data or {}
    if pd.kind ~= "json" then msg(state, "Expected a JSON body in the request, its kind was: " .. tostring(pd.kind)) return false end
    return true, { pd.params, n = 1 }
  end
  local res = rawget(state, "kong_response") or args[1]
  local body = body_of(res)
  local json, err = cjson.decode(body)
  if json == nil then msg(state, "Expected a JSON body in the response (" .. tostring(err) .. "):\n" .. body) return false end
  msg(state, "Expected the response body not to be JSON")
  return true, { json, n = 1 }
end)

local function from_echo(field, label)
  return function(state, args)
    local json = echoed(state)
    if not json then return false end
    local t = field(json) or {}
    local v = t[args[1]]
    if v == nil then msg(state, ("Expected the %s '%s' in the request"):format(label, args[1])) return false end
    msg(state, ("Expected no %s '%s' in the request, got %s"):format(label, args[1], tostring(v)))
    return true, { v, n = 1 }
  end
end
register("assertion", "queryparam", from_echo(function(j) return j.uri_args end, "query parameter"))
register("assertion", "formparam", from_echo(function(j)
  return j.post_data and j.post_data.kind == "form" and j.post_data.params
end, "form parameter"))

register("assertion", "uuid", function(state, args)
  msg(state, "Expected a UUID, got: " .. tostring(args[1]))
  return type(args[1]) == "string" and require("kong.tools.uuid").is_valid_uuid(args[1])
end)

return true
