-- The servers answered in process and where they listen: Kong's mock upstream, the Zipkin collector Kong's
-- helpers name (zipkin_host, zipkin_port), and the http_mock servers started, by port; and the dns_mock the
-- Kong started was given, which resolves names for Kong in process (a plugin's resty.http, a service's host).
local entities = require "broker.spec.entities"
local M = { started = {} }

M.MOCK_SSL_PORT = 15556
M.zipkin_host = os.getenv("KONG_SPEC_TEST_ZIPKIN_HOST") or "localhost"
M.zipkin_port = tonumber(os.getenv("KONG_SPEC_TEST_ZIPKIN_PORT")) or 9411
-- the started Kong's spec.helpers.dns_mock (start_kong's fixtures.dns_mock), or nil
M.dns = nil

local LOCAL = { ["127.0.0.1"] = true, localhost = true, ["::1"] = true, ["0.0.0.0"] = true }

--- The address `host` is reached at: through the started Kong's dns_mock when `by_kong`, else the name itself.
function M.resolve(host, by_kong)
  if by_kong and M.dns then return M.dns:resolve(host) or host end
  return host
end

--- Whether `host` (resolved as Kong in process resolves it) is this machine.
function M.is_local(host) return LOCAL[M.resolve(host, true)] == true end

--- The host op that answers a request to host:port in process ("upstream", "zipkin", "mock"), or nil.
--- `by_kong`: Kong in process sends it (its dns_mock resolves the name), not the spec's own client.
function M.server(host, port, by_kong)
  port = tonumber(port)
  local here = LOCAL[M.resolve(host, by_kong)]
  if here and M.started[port] then return "mock" end
  if here and (port == entities.MOCK_PORT or port == M.MOCK_SSL_PORT) then return "upstream" end
  if (here or host == M.zipkin_host) and port == M.zipkin_port then return "zipkin" end
  return nil
end

--- A request to the http_mock on `port`: its answer { status, headers, body }; the mock keeps the session.
function M.answer(port, request)
  local mock = M.started[tonumber(port)]
  if not mock then return nil end
  return mock:handle(request)
end

-- the servers of start_kong's fixtures.http_mock, started while that Kong runs
local fixture_mocks = {}

--- Starts an http_mock on `port` with `routes` for the Kong starting (its nginx server block fixture).
function M.start_fixture(port, routes)
  local mock = require("spec.helpers.http_mock").new(port, routes)
  mock:start()
  fixture_mocks[#fixture_mocks + 1] = mock
end

--- Stops the fixture servers of the Kong that ran.
function M.stop_fixtures()
  for _, mock in ipairs(fixture_mocks) do mock:stop() end
  fixture_mocks = {}
end

-- Kong in process proxying to a service on a started http_mock (kong.ts): its answer, or nil when the service's
-- host is not this machine's
function __spec_mock_answer(host, port, request)
  if M.server(host, port, true) ~= "mock" then return nil end
  return M.answer(port, request)
end

return M
