-- Kong's assertion extensions for luassert (written for broker from Kong's spec docs):
-- assert.response(r) / assert.request(r) modifiers, and status, res_status, header, jsonbody,
-- queryparam, formparam, is_uuid, contains, match_re. The request assertions read the mock upstream's echo.
local L = require "luassert"
local cjson = require "cjson.safe"
local lookup = require("broker.spec.client").lookup
local assert = L.assert

local function register(kind, name, fn, pos, neg) assert:register(kind, name, fn, pos, neg) end
local function msg(state, text) rawset(state, "failure_message", text) end

-- assert.logfile([path]).has.line(pattern, plain) / .has.no.line: the error.log Kong in process
-- keeps (logfile.lua), a pattern a PCRE as ngx.re reads it unless plain
local logfile = require "broker.spec.logfile"
local function errlog(state, args)
  if args[1] ~= nil and type(args[1]) ~= "string" then
    error("assert.logfile() takes nil or a path, got " .. type(args[1]), 6)
  end
  rawset(state, "errlog_path", args[1] or false)
  return state
end
register("modifier", "logfile", errlog)
register("modifier", "errlog", errlog)

local function find_line(lines, pattern, plain)
  for _, line in ipairs(lines) do
    if plain then
      if line:find(pattern, 1, true) then return line end
    else
      local from, _, err = ngx.re.find(line, pattern, "oj")
      if err then error("assert.logfile(): the regex " .. string.format("%q", pattern) .. " is invalid: " .. err, 7) end
      if from then return line end
    end
  end
end

register("assertion", "line", function(state, args)
  local pattern, plain = args[1], args[2]
  if type(pattern) ~= "string" then error("assert.logfile().has.line() expects a pattern (a string)", 6) end
  local path = rawget(state, "errlog_path") or args[4] or nil
  local lines, err = logfile.read(path)
  if not lines then require("broker.spec.client").raise(err) end
  local found = find_line(lines, pattern, plain)
  local shown = path or "servroot/logs/error.log"
  if found then
    msg(state, ("Expected no line in %s to match %s, but this one does:\n%s"):format(shown, pattern, found))
    return true, { found, n = 1 }
  end
  msg(state, ("Expected a line in %s to match %s%s; it has %d lines%s"):format(shown, pattern,
    plain and " (plain)" or "", #lines, #lines > 0 and (":\n" .. table.concat(lines, "\n", math.max(1, #lines - 9))) or ""))
  return false
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


-- surrounding whitespace off, as Kong's status assertion returns a body (an `ngx.say` line without its newline)
-- (found from both ends: a pattern with `.-` over a body of megabytes costs as much as the request)
local function strip(text)
  local from = text:find("%S")
  if not from then return "" end
  local to = #text
  while to > from and text:find("^%s", to) do to = to - 1 end
  return text:sub(from, to)
end

-- status(n): the response's status; returns its body, stripped
local function status(state, args)
  local expected, res = args[1], rawget(state, "kong_response") or args[2]
  local body = body_of(res)
  if res.status ~= expected then
    msg(state, ("Expected the response status to be %s, got %s. Body:\n%s"):format(tostring(expected), tostring(res.status), body))
    return false
  end
  msg(state, ("Expected the response status not to be %s"):format(tostring(expected)))
  return true, { strip(body), n = 1 }
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
    -- a response, or any table with headers (a decoded echo: assert.has.header("host", json))
    if type(res) == "table" and type(res.read_body) ~= "function" and type(res.headers) == "table" then
      headers = res.headers
    else
      body_of(res)
      headers = res.headers or {}
    end
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
    -- Kong's answer: the mock upstream's post_data as { params, data, error, kind }, a JSON error included
    local pd = json.post_data or {}
    if (pd.kind ~= "json" and pd.kind ~= "json (error)") or pd.params == nil then
      msg(state, "Expected a JSON body in the request, its kind was: " .. tostring(pd.kind))
      return false
    end
    return true, { { params = pd.params, data = pd.text, error = pd.error, kind = pd.kind }, n = 1 }
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
  local kind = j.post_data and j.post_data.kind
  return (kind == "form" or kind == "multipart-form") and j.post_data.params or nil
end, "form parameter"))

register("assertion", "uuid", function(state, args)
  msg(state, "Expected a UUID, got: " .. tostring(args[1]))
  return type(args[1]) == "string" and require("kong.tools.uuid").is_valid_uuid(args[1])
end)

-- assert.contains(value, list, pattern): the index of the first element equal to value (or matching it,
-- a Lua pattern, when pattern is truthy). Every integer key is looked at in order: Kong's arrays of field
-- errors have holes ({ [2] = "invalid value: x" }), whose length LuaJIT counts past the hole and Lua 5.4 not
register("assertion", "contains", function(state, args)
  local expected, list, pattern = args[1], args[2], args[3]
  if type(list) ~= "table" then msg(state, "Expected an array to look in, got " .. type(list)) return false end
  local last = 0
  for k in pairs(list) do if math.type(k) == "integer" and k > last then last = k end end
  for i = 1, last do
    local v = list[i]
    if v == expected or (pattern and type(v) == "string" and v:match(expected)) then
      msg(state, ("Expected the array not to contain %s, found at %d"):format(tostring(expected), i))
      return true, { i, n = 1 }
    end
  end
  msg(state, ("Expected the array to contain %s"):format(tostring(expected)))
  return false
end)

-- assert.match_re(text, regex): the regex (a PCRE, as ngx.re reads it) is found in the text
register("assertion", "match_re", function(state, args)
  local text, regex = args[1], args[2]
  if type(text) ~= "string" then error("assert.match_re: expected the text to be a string, got " .. type(text), 4) end
  if type(regex) ~= "string" then error("assert.match_re: expected the regex to be a string, got " .. type(regex), 4) end
  local from, _, err = ngx.re.find(text, regex)
  if err then error("assert.match_re: " .. err, 4) end
  msg(state, from and ("Expected\n" .. text .. "\nnot to match the regex " .. regex)
    or ("Expected\n" .. text .. "\nto match the regex " .. regex))
  return from ~= nil
end)

return true
