-- spec.helpers.http_mock, broker's own: a mock server on a port that a service can point at
-- (host localhost or 127.0.0.1). Started, it answers every request 200 "ok" in process and keeps
-- what it was sent; routes of nginx directives (access, content …) are not emulated and refuse.
local registry = require "broker.spec.mocks"
local raise = require("broker.spec.client").raise
local M = {}
local Mock = {}
Mock.__index = Mock

--- A mock on `port`; `routes` with nginx directives are not emulated.
function M.new(port, routes, opts)
  if routes ~= nil and next(routes) ~= nil then
    raise("spec.helpers.http_mock: routes of nginx directives are not emulated by broker yet (a mock answers 200 \"ok\")")
  end
  return setmetatable({ port = tonumber(port) or 15556, opts = opts or {}, logs = {} }, Mock)
end

function Mock:start() registry.started[self.port] = self return true end
function Mock:stop() registry.started[self.port] = nil return true end
--- What it was sent, oldest first (Kong's `retrieve_mocking_logs`).
function Mock:retrieve_mocking_logs() local l = self.logs self.logs = {} return l end
function Mock:get_request()
  local entry = table.remove(self.logs, 1)
  if not entry then raise("http_mock: no request was sent to the mock on port " .. self.port) end
  return entry.req
end
function Mock:clean() self.logs = {} end
-- spec.helpers.https_server's names for the same server
function Mock:shutdown() return self:stop() end
function Mock:clear_access_log() self.logs = {} end
function Mock:get_access_log() return self.logs end
function Mock:get_all_logs() return self.logs end

return M
