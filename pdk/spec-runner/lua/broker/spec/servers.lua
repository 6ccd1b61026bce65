-- spec.helpers' servers a logging plugin sends to (written for broker from Kong's documented helpers):
-- tcp_server and udp_server listen on loopback in the host's socket worker (servers.ts) while the
-- spec goes on; `thread:join()` waits for what they received, letting the plugin's timers run
-- meanwhile, and answers as Kong's llthreads2 thread does (true, then the server's values).
local M = {}

-- how long join waits for the host between two turns of the plugin's timers (ms)
local STEP = 50

local Thread = {}
Thread.__index = Thread

function Thread:join()
  if self.joined then return true, table.unpack(self.joined, 1, self.joined.n) end
  local waited = 0
  local r
  repeat
    r = __spec_socket("join", { id = self.id, timeout = STEP })
    if r.pending then
      waited = waited + STEP
      -- a plugin's timers due meanwhile run (the log a timer or a queue sends)
      ngx.sleep(STEP / 1000)
    end
  until not r.pending or waited > self.wait + 1000
  if r.pending then
    r = { error = "broker: the " .. self.kind .. " on port " .. self.port .. " never finished" }
  end
  self.joined = self.answer(r)
  return true, table.unpack(self.joined, 1, self.joined.n)
end

local function start(kind, args, wait, answer)
  local r = __spec_socket(kind == "tcp_server" and "tcp_serve" or "udp_serve", args)
  if r.error then error("spec.helpers." .. kind .. ": " .. r.error, 3) end
  return setmetatable({ id = r.id, kind = kind, port = args.port, wait = wait, answer = answer }, Thread)
end

--- helpers.tcp_server(port, opts): accepts opts.requests connections (1), reads a line from each and
--- echoes it (opts.prefix first); join gives the last line, or "timeout" after opts.timeout seconds (60).
function M.tcp_server(port, opts)
  opts = opts or {}
  local wait = (tonumber(opts.timeout) or 60) * 1000
  return start("tcp_server", {
    port = math.tointeger(tonumber(port)), requests = tonumber(opts.requests) or 1, timeout = wait,
    tls = opts.tls and true or false, prefix = opts.prefix,
    cert = "spec/fixtures/kong_spec.crt", key = "spec/fixtures/kong_spec.key",
  }, wait, function(r) return table.pack(r.data, r.error) end)
end

--- helpers.kill_tcp_server(port): ends a tcp_server early; answers its counts of good and failed reads.
function M.kill_tcp_server(port)
  local sock = ngx.socket.tcp()
  assert(sock:connect("localhost", port))
  assert(sock:send("@DIE@\n"))
  local line = assert(sock:receive())
  sock:close()
  local oks, fails = line:match("(%d+):(%d+)")
  return tonumber(oks), tonumber(fails)
end

--- helpers.udp_server(port, n, timeout): reads n packets (1), each within timeout seconds (360); join
--- gives the packet (n = 1) or the list of them, and "timeout" as the error when fewer came.
function M.udp_server(port, n, timeout)
  n = tonumber(n) or 1
  local wait = (tonumber(timeout) or 360) * 1000
  port = math.tointeger(tonumber(port) or require("broker.spec.db").MOCK_PORT)
  return start("udp_server", { port = port, n = n, timeout = wait }, wait, function(r)
    local packets = r.packets or {}
    local data = {}
    for i, p in ipairs(packets) do data[i] = tostring(p) end
    if n > 1 then return table.pack(data, r.error) end
    return table.pack(data[1], r.error)
  end)
end

return M
