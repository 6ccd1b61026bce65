-- The servers answered in process and where they listen: Kong's mock upstream, the Zipkin collector Kong's
-- helpers name (zipkin_host, zipkin_port), and the http_mock servers started, by port (the proxy answers a
-- service on one of them in process).
local entities = require "broker.spec.entities"
local M = { started = {} }

M.MOCK_SSL_PORT = 15556
M.zipkin_host = os.getenv("KONG_SPEC_TEST_ZIPKIN_HOST") or "localhost"
M.zipkin_port = tonumber(os.getenv("KONG_SPEC_TEST_ZIPKIN_PORT")) or 9411

local LOCAL = { ["127.0.0.1"] = true, localhost = true }

--- The host op that answers a request to host:port in process ("upstream", "zipkin"), or nil.
function M.server(host, port)
  port = tonumber(port)
  local here = LOCAL[host]
  if here and (port == entities.MOCK_PORT or port == M.MOCK_SSL_PORT) then return "upstream" end
  if (here or host == M.zipkin_host) and port == M.zipkin_port then return "zipkin" end
  return nil
end

return M
