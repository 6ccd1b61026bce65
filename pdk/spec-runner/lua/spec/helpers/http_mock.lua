-- spec.helpers.http_mock, broker's own (written from Kong's documented helper): a mock server on a port that a
-- service or a plugin's resty.http can reach (on this machine's names, or a name the started Kong's dns_mock
-- resolves to one). Started, it answers in process with its routes (broker.spec.mock_server: access, content
-- and log Lua, `return` directives) and keeps each session; without routes it answers as Kong's default mock
-- does (200 "ok"). What of a route is not emulated raises naming it.
local registry = require "broker.spec.mocks"
local server = require "broker.spec.mock_server"
local raise = require("broker.spec.client").raise
local M = {}
local Mock = {}
Mock.__index = Mock

local DEFAULT = { ["/"] = { access = [[
  ngx.req.set_header("X-Test", "test")
  ngx.print("ok")
  ngx.exit(200)
]] } }
local FIELDS = { access = true, content = true, log = true, directives = true, header_filter = true,
  body_filter = true }

-- the port of a listen directive: a number, "host:port[ ssl]", "port", or the first of a list
local function port_of(listens)
  if type(listens) == "table" then listens = listens[1] end
  if type(listens) == "number" then return listens end
  -- the address part (before " ssl" …) ends with the port
  local address = tostring(listens or ""):match("^%s*(%S+)") or ""
  return tonumber(address:match("(%d+)$"))
end

--- A mock on `listens` (a port, "host:port", or a list of them) answering with `routes` (Kong's shape).
function M.new(listens, routes, opts)
  local port = listens == nil and require("spec.helpers").get_available_port() or port_of(listens)
  if not port then raise("spec.helpers.http_mock: cannot read a port from " .. tostring(listens)) end
  if routes == nil then routes = DEFAULT
  elseif type(routes) == "string" then routes = { ["/"] = { access = routes } }
  elseif type(routes) ~= "table" then raise("spec.helpers.http_mock: routes must be a table or a string") end
  for location, route in pairs(routes) do
    if type(location) ~= "string" or type(route) ~= "table" then
      raise("spec.helpers.http_mock: a route is a location (a string) and a table of its phases")
    end
    for field in pairs(route) do
      if not FIELDS[field] then
        raise("spec.helpers.http_mock: the route field '" .. tostring(field) .. "' is not emulated by broker "
          .. "(access, content, log and directives are)")
      end
    end
  end
  opts = opts or {}
  local log_opts = opts.log_opts or {}
  return setmetatable({ port = port, routes = routes, opts = opts, logs = {},
    keep = log_opts.req ~= false }, Mock)
end

--- One request answered by the routes: { status, headers, body }; the session is kept.
function Mock:handle(request)
  local answer, session = server.answer(self.routes, self.port, request)
  if self.keep then self.logs[#self.logs + 1] = session end
  return answer
end

function Mock:start() registry.started[self.port] = self return true end
function Mock:stop() if registry.started[self.port] == self then registry.started[self.port] = nil end return true end
function Mock:get_default_port() return self.port end
--- A client of the mock, as helpers.http_client to its port.
function Mock:get_client() return require("broker.spec.client").new("mock", "localhost", self.port) end
--- What it was sent, oldest first (Kong's `retrieve_mocking_logs`).
function Mock:retrieve_mocking_logs() local l = self.logs self.logs = {} return l end
function Mock:get_session()
  local entry = table.remove(self.logs, 1)
  if not entry then raise("http_mock: no request was sent to the mock on port " .. self.port) end
  return entry
end
function Mock:get_request() return self:get_session().req end
function Mock:get_response() return self:get_session().resp end
function Mock:clean() self.logs = {} end
-- spec.helpers.https_server's names for the same server
function Mock:shutdown() return self:stop() end
function Mock:clear_access_log() self.logs = {} end
function Mock:get_access_log() return self.logs end
function Mock:get_all_logs() return self.logs end

return M
