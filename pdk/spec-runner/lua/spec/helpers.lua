-- spec.helpers, broker's own (written from Kong's documented helpers): the subset plugin specs
-- use, with Kong in process instead of a Kong started in a prefix. A helper broker has not written
-- raises an error naming it, so the test that uses it fails rather than passes unseen.
local db = require "broker.spec.db"
local dao = require "broker.spec.dao"
local entities = require "broker.spec.entities"
local client = require "broker.spec.client"
local mocks = require "broker.spec.mocks"
require "broker.spec.assertions"
require "broker.spec.eventually"
-- Kong's helpers load Kong's constants and tools (through its configuration loader and kong.global) before a spec
-- runs: a spec that then replaces _G.ngx with a stub and loads a PDK module afresh (opentelemetry's utils spec)
-- finds them loaded with the real ngx. Those a run has (a Kong checkout's, or broker's own).
for _, name in ipairs({ "kong.constants", "kong.tools.uri", "kong.tools.http", "kong.tools.yield", "kong.tools.cjson" }) do
  pcall(require, name)
end

local H = {}
local started = nil
-- Hybrid mode: the data plane started beside a control plane, or nil. Both are the one Kong in process, so the data
-- plane has the control plane's configuration at once: its prefix, its listeners' ports and its start options.
local data_plane = nil
-- the listeners a started Kong (traditional, or a control plane) has beyond Kong's test ones: its proxy_listen and
-- status_listen ports, which spec.helpers' http_client reaches
local listeners = { proxy = {}, status = {} }
-- whether a Kong was started before in this spec file (a start after it is a restart)
local started_before = false

H.mock_upstream_protocol = "http"
H.mock_upstream_host = db.MOCK_HOST
H.mock_upstream_hostname = "localhost"
H.mock_upstream_port = db.MOCK_PORT
H.mock_upstream_url = "http://" .. db.MOCK_HOST .. ":" .. db.MOCK_PORT
H.mock_upstream_ssl_protocol = "https"
H.mock_upstream_ssl_host = db.MOCK_HOST
H.mock_upstream_ssl_port = 15556
H.mock_upstream_ssl_url = "https://" .. db.MOCK_HOST .. ":15556"
H.mock_upstream_stream_port = 15557
H.mock_upstream_stream_ssl_port = 15558
-- the Zipkin collector Kong's helpers name (KONG_SPEC_TEST_ZIPKIN_HOST/PORT or localhost:9411), answered in
-- process (pdk/spec-runner/zipkin.ts): the zipkin plugin posts its spans there, the spec reads them back
H.zipkin_host, H.zipkin_port = mocks.zipkin_host, mocks.zipkin_port
-- DNS records for the Kong start_kong starts (its fourth argument's dns_mock): broker.spec.dns_mock
H.dns_mock = require "broker.spec.dns_mock"
-- grpcbin, answered in process (its hello.HelloService) for proxy_client_grpc's calls (pdk/spec-runner/grpc/)
H.grpcbin_host, H.grpcbin_port, H.grpcbin_ssl_port = "127.0.0.1", 15002, 15003
H.grpcbin_url = "grpc://127.0.0.1:15002"
H.grpcbin_ssl_url = "grpcs://127.0.0.1:15003"
-- Redis as Kong's specs name it: redis_host, redis_port and redis_ssl_port are read lazily (below); the
-- first read starts a redis-server for this spec file unless KONG_SPEC_TEST_REDIS_* name one (redis-server.ts)
H.redis_auth_port = tonumber(os.getenv("KONG_SPEC_TEST_REDIS_AUTH_PORT") or 6385)
H.redis_ssl_sni = os.getenv("KONG_SPEC_TEST_REDIS_SSL_SNI") or "test-redis.example.com"
local REDIS_FIELDS = { redis_host = "host", redis_port = "port", redis_ssl_port = "ssl_port" }
-- the database as the module holds it (Kong's helpers.db and helpers.blueprints)
H.db = dao.db
H.blueprints = db.bp
-- spec.helpers.https_server.new(port, hostname): a server a service points at, answered 200 "ok" in
-- process as an http_mock is (its TLS and hostname checks are not emulated)
H.https_server = { new = function(port) return require("spec.helpers.http_mock").new(port) end }
H.test_conf_path = "spec/kong_tests.conf"
-- Penlight's pl.utils, as Kong's helpers expose it (readfile, writefile, split …)
H.utils = require "pl.utils"
H.test_conf = {
  prefix = "servroot", database = "postgres", plugins = { "bundled" }, log_level = "debug",
  proxy_listeners = { { ip = "0.0.0.0", port = 9000 } }, admin_listeners = { { ip = "127.0.0.1", port = 9001 } },
  nginx_err_logs = "servroot/logs/error.log", proxy_error_log = "logs/error.log", admin_error_log = "logs/error.log",
}
H.unindent = function(str, concat_newlines, spaced_newlines)
  str = str:match("^%s*\n?(.-)%s*$")
  local indent
  for line in str:gmatch("[^\n]+") do
    local lead = line:match("^(%s*)%S")
    if lead and (not indent or #lead < #indent) then indent = lead end
  end
  if indent and #indent > 0 then str = ("\n" .. str):gsub("\n" .. indent, "\n"):sub(2) end
  if concat_newlines then str = str:gsub("\n", spaced_newlines and " " or "") end
  return str
end

-- the strategies the emulator runs: both in memory, the same rows (docs/pdk-test.md)
local STRATEGIES = { "postgres", "off" }
local function iterate(list)
  local i = 0
  return function() i = i + 1 if list[i] then return i, list[i] end end
end
function H.each_strategy() return iterate({ "postgres" }) end
function H.all_strategies() return iterate(STRATEGIES) end

--- bp and db over an empty in-memory database; `plugins` names the plugins the spec loads.
function H.get_db_utils(strategy, tables, plugins)
  if strategy ~= nil and strategy ~= "postgres" and strategy ~= "off" then
    error("spec.helpers.get_db_utils: strategy '" .. tostring(strategy) .. "' is not emulated (postgres and off are, in memory)", 2)
  end
  if tables then for _, t in ipairs(tables) do db.truncate(t) end else db.truncate() end
  db.reset_sequences()
  entities.plugins = {}
  for _, p in ipairs(plugins or {}) do entities.plugins[p] = true end
  return db.bp, dao.db
end

--- Kong's plugin schema check: the entity with the config's defaults, or nil and Kong's error shape.
function H.validate_plugin_config_schema(config, schema)
  local conf, err = require("broker.spec.errors").check_plugin(schema, config)
  if not conf then return nil, err end
  return { id = require("kong.tools.uuid").uuid(), name = schema.name, config = conf,
    protocols = { "grpc", "grpcs", "http", "https" }, enabled = true }
end

--- Kong "starts" in process: requests of proxy_client and admin_client run through it.
-- a plugin's handler, loaded as Kong loads a plugin's files, in nginx's init phase (prometheus's handler starts its
-- counters at its top level, which only init, init_worker and timers may)
local function load_handler(name)
  __broker_loading = true
  local ok, err = pcall(require, "kong.plugins." .. name .. ".handler")
  __broker_loading = false
  return ok, err
end
-- Kong's bundled AI plugins, whose handlers register the kong.llm filters: the checkout's own list
-- (kong.constants), none outside a checkout
local function bundled_ai_plugins()
  local out = {}
  local ok, constants = pcall(require, "kong.constants")
  if ok and type(constants) == "table" and type(constants.BUNDLED_PLUGINS) == "table" then
    for name in pairs(constants.BUNDLED_PLUGINS) do
      if type(name) == "string" and name:find("^ai%-") then out[#out + 1] = name end
    end
  end
  table.sort(out)
  return out
end
local function names_bundled(names)
  for _, n in ipairs(names) do if n == "bundled" then return true end end
  return false
end
-- whether an AI plugin is named in start_kong's plugins or configured in the database
local function uses_ai(names)
  for _, n in ipairs(names) do if tostring(n):find("^ai%-") then return true end end
  for _, row in ipairs(require("broker.spec.db").rows("plugins")) do
    if type(row.name) == "string" and row.name:find("^ai%-") then return true end
  end
  return false
end

-- the ports of a *_listen option ("0.0.0.0:9002, 127.0.0.1:9443 ssl"; "off": none)
local function listen_ports(v)
  local ports = {}
  for entry in tostring(v or "off"):gmatch("[^,]+") do
    local port = tonumber(entry:match("^%s*[^%s]-:(%d+)") or entry:match("^%s*(%d+)"))
    if port then ports[port] = true end
  end
  return ports
end

-- A data plane starts beside the control plane started before it (the one Kong in process): its proxy listens on its
-- proxy_listen ports, its status API on status_listen; it takes the control plane's configuration at once and logs it
-- as Kong's data plane does when a full sync ends (cluster_rpc_sync = on), in its prefix's error.log.
local function start_data_plane(env)
  if not started or started.role ~= "control_plane" then
    return nil, "spec.helpers.start_kong: a data plane (role 'data_plane') is emulated beside its control plane: "
      .. "start the one with role 'control_plane' first"
  end
  local prefix = tostring(env.prefix or "servroot")
  data_plane = { env = env, prefix = prefix,
    proxy = listen_ports(env.proxy_listen or "0.0.0.0:9000, 0.0.0.0:9443 ssl, 0.0.0.0:9002 http2"),
    status = listen_ports(env.status_listen) }
  local logfile = require("broker.spec.logfile")
  logfile.prefixes[prefix] = true
  if env.cluster_rpc_sync == "on" or env.cluster_rpc_sync == true then
    logfile.append({ os.date("!%Y/%m/%d %H:%M:%S") .. " [info] 1#0: [kong.sync.v2] full sync ends, context: ngx.timer" })
  end
  return true
end

function H.start_kong(env, _, _, fixtures)
  env = env or {}
  if env.role == "data_plane" then return start_data_plane(env) end
  -- fixtures: a dns_mock resolves names for Kong in process; http_mock's nginx server blocks answer as http_mocks
  -- while this Kong runs (broker.spec.server_blocks); stream_mock's are not emulated
  fixtures = fixtures or {}
  if type(fixtures.stream_mock) == "table" and next(fixtures.stream_mock) ~= nil then
    return nil, "spec.helpers.start_kong: fixtures.stream_mock (nginx stream server blocks: " .. next(fixtures.stream_mock)
      .. ") is not emulated by broker"
  end
  if fixtures.dns_mock ~= nil and getmetatable(fixtures.dns_mock) ~= require("broker.spec.dns_mock") then
    return nil, "spec.helpers.start_kong: expected dns_mock to be of a helpers.dns_mock class"
  end
  mocks.stop_fixtures()
  local servers = {}
  for name, text in pairs(type(fixtures.http_mock) == "table" and fixtures.http_mock or {}) do
    local ok, list = pcall(require("broker.spec.server_blocks").servers, tostring(name), tostring(text))
    if not ok then return nil, "spec.helpers.start_kong: " .. tostring(list) end
    for _, server in ipairs(list) do servers[#servers + 1] = server end
  end
  for _, server in ipairs(servers) do mocks.start_fixture(server.port, server.routes) end
  mocks.dns = fixtures.dns_mock
  if env.role ~= nil and env.role ~= "traditional" and env.role ~= "control_plane" then
    return nil, "spec.helpers.start_kong: role '" .. tostring(env.role) .. "' is none of Kong's (traditional, control_plane, data_plane)"
  end
  data_plane = nil
  listeners = { proxy = env.role == "control_plane" and {} or listen_ports(env.proxy_listen),
    status = listen_ports(env.status_listen) }
  -- Kong's test process and Kong are two processes: Kong loads its own instance of every module of the plugin's or
  -- Kong's code (not broker's emulation), which reads the environment as it is then (helpers.setenv before the
  -- start: ai-proxy's OPENAI_TEST_PORT) and keeps its module-level state for that Kong only (the namespaces Kong's
  -- AI plugins register in kong.llm.plugin.ctx). Kong in process loads them afresh on every start; a module the
  -- spec loaded before keeps its own copy.
  for name in pairs(package.loaded) do
    if type(name) == "string" and __broker_user_modules[name] then package.loaded[name] = nil end
  end
  -- A Kong started again has new workers: its plugins' modules load afresh, and what they kept at module level
  -- (statsd's time of its last shared-dict metrics, a setting read when the module loads, as request-transformer
  -- reads the untrusted Lua settings) starts over, and it forgets the plugin instances it made.
  if started_before then
    for name in pairs(package.loaded) do
      if type(name) == "string" and (name:find("^kong%.plugins%.") or name:find("^kong%.tools%.sandbox")) then
        package.loaded[name] = nil
      end
    end
    client.generation = client.generation + 1
    -- and a new nginx: its shared dicts start empty (prometheus's metrics of the Kong before are gone)
    for _, dict in pairs(ngx.shared) do
      if type(dict) == "table" and dict.flush_all then dict:flush_all() end
    end
  end
  started_before = true
  local plugins = env.plugins
  -- kong.configuration as Kong's would show it: the database, and the plugins list as start_kong gives it
  local names = {}
  if type(plugins) == "table" then for i, name in ipairs(plugins) do names[i] = name end
  else for name in tostring(plugins or "bundled"):gmatch("[^,%s]+") do names[#names + 1] = name end end
  local function list(v)
    local out = {}
    if type(v) == "table" then for i, x in ipairs(v) do out[i] = x end
    else for x in tostring(v or ""):gmatch("[^,%s]+") do out[#out + 1] = x end end
    return setmetatable(out, __broker_array_mt)
  end
  -- set before the plugins load: a module of Kong's code that loads with them reads it then (the sandbox)
  pcall(function()
    kong.configuration.database = env.database or "postgres"
    kong.configuration.plugins = setmetatable(names, __broker_array_mt)
    -- the untrusted Lua settings, Kong's defaults unless given; the sandbox reads them afresh, as a new Kong would
    kong.configuration.untrusted_lua = env.untrusted_lua or "sandbox"
    kong.configuration.untrusted_lua_sandbox_requires = list(env.untrusted_lua_sandbox_requires)
    kong.configuration.untrusted_lua_sandbox_environment = list(env.untrusted_lua_sandbox_environment)
  end)
  if type(plugins) == "string" then
    for name in plugins:gmatch("[^,%s]+") do
      if name ~= "bundled" and name ~= "off" then
        local ok, err = load_handler(name)
        if not ok and not entities.js_plugin(name) then
          return nil, "plugin '" .. name .. "' cannot be loaded: " .. tostring(err)
        end
      end
    end
  end
  -- Kong loads every bundled plugin's handler when it starts. Broker loads a bundled plugin when a request needs it,
  -- except Kong's AI plugins: their handlers register the filters whose namespaces the others read (a transformer
  -- reads the model parse-request keeps), so when one of them is named or configured, all of them load now.
  if names_bundled(names) and uses_ai(names) then
    for _, name in ipairs(bundled_ai_plugins()) do load_handler(name) end
  end
  -- a declarative config replaces the database, as Kong without one loads it at its start
  local loaded, load_err = require("broker.spec.dbless").start(env)
  if not loaded then return nil, "spec.helpers.start_kong: " .. tostring(load_err) end
  started = env
  -- the CA a plugin's TLS connection checks its peer with (Kong's lua_ssl_trusted_certificate; Redis's ssl_verify)
  require("broker.spec.sockets").trusted = type(env.lua_ssl_trusted_certificate) == "string"
    and env.lua_ssl_trusted_certificate:match("^[^,]+") or nil
  pcall(function()
    -- the default workspace's id, as Kong reads it from its database when it starts: what
    -- kong.workspaces.get_workspace_id() answers where a request's context names none (a timer's)
    kong.default_workspace = nil
    for _, ws in ipairs(require("broker.spec.db").rows("workspaces")) do
      if ws.name == "default" then kong.default_workspace = ws.id end
    end
  end)
  -- a Kong that starts has an empty node cache, then warms it up with the entities it is told to
  require("broker.db").cache:purge()
  local warm, warm_err = require("broker.spec.warmup").run(env.db_cache_warmup_entities)
  if not warm then started = nil return nil, warm_err end
  -- what of Kong's configuration a request of Kong in process reads: who the client is behind proxies
  local trusted = {}
  for ip in tostring(env.trusted_ips or ""):gmatch("[^,%s]+") do trusted[#trusted + 1] = ip end
  client.kong_conf = { trusted_ips = setmetatable(trusted, __broker_array_mt), real_ip_header = env.real_ip_header,
    real_ip_recursive = env.real_ip_recursive == "on" or env.real_ip_recursive == true }
  return true
end
function H.stop_kong(prefix)
  -- the data plane's prefix stops the data plane alone; the control plane (or a traditional Kong) stops both
  if data_plane and prefix ~= nil and tostring(prefix) == data_plane.prefix and data_plane.prefix ~= "servroot" then
    require("broker.spec.logfile").prefixes[data_plane.prefix] = nil
    data_plane = nil
    return true
  end
  if data_plane then require("broker.spec.logfile").prefixes[data_plane.prefix] = nil end
  data_plane = nil
  listeners = { proxy = {}, status = {} }
  started = nil
  mocks.stop_fixtures()
  require("broker.spec.sockets").drain()
  return true
end
function H.restart_kong(env) H.stop_kong() return H.start_kong(env) end

-- Kong's use_old_plugin: the Kong started next loads the plugin from an older Kong's source
-- (KONG_SPEC_TEST_OLD_VERSION_KONG_PATH); the function it answers puts the current plugin back
local function forget_plugin(name)
  local prefix = "kong.plugins." .. name
  for module in pairs(package.loaded) do
    if type(module) == "string" and (module == prefix or module:sub(1, #prefix + 1) == prefix .. ".") then
      package.loaded[module] = nil
    end
  end
end
function H.use_old_plugin(name)
  if type(name) ~= "string" then error("use_old_plugin: give the plugin's name (a string)", 2) end
  local ok, err = __spec_old_plugin(name)
  if not ok then error(err, 2) end
  forget_plugin(name)
  return function()
    __spec_new_plugin(name)
    forget_plugin(name)
  end
end
function H.clean_logfile(path)
  if path == nil or require("broker.spec.logfile").is_ours(path) then require("broker.spec.logfile").clean() return end
  local f = io.open(path, "w")
  if f then f:close() end
end
--- The configuration the Kong running in `prefix` (servroot) started with, with Kong's paths under its prefix.
function H.get_running_conf(prefix)
  prefix = tostring(prefix or "servroot")
  local env = data_plane and data_plane.prefix == prefix and data_plane.env or started or {}
  local conf = {}
  for k, v in pairs(H.test_conf) do conf[k] = v end
  for k, v in pairs(env) do conf[k] = v end
  conf.prefix, conf.nginx_err_logs = prefix, prefix .. "/logs/error.log"
  return conf
end
function H.clean_prefix() end
function H.prepare_prefix() return true end
function H.kill_all() end
H.make_yaml_file = require("broker.spec.dbless").make_yaml_file
function H.wait_for_all_config_update() end
-- the timers a request queued ran once it was answered (timers.lua), those due since run now
function H.wait_timer() require("broker.spec.timers").run() return true end
function H.wait_for_invalidation() end
-- `kong <command>` in a shell, as Kong's helper runs its CLI: ok, stderr, stdout (with `returns`, Penlight's
-- executeex shape: ok, code, stdout, stderr). The emulator has no Kong binary: `version` (and `version -a`) prints
-- the version it emulates, as Kong's CLI does; other commands answer not ok, naming themselves (a spec's assert
-- fails with that)
function H.kong_exec(cmd, _, returns)
  cmd = tostring(cmd or "")
  local args = {}
  for word in cmd:gmatch("%S+") do args[#args + 1] = word end
  local ok, stderr, stdout = true, "", nil
  if args[1] == "version" and (args[2] == "-a" or args[2] == "--all") then
    stdout = string.format("Kong: %s\nngx_lua: %s\nnginx: %s\nLua: %s\n", kong.version,
      ngx.config.ngx_lua_version, ngx.config.nginx_version, _VERSION)
  elseif args[1] == "version" then
    stdout = kong.version .. "\n"
  else
    ok, stderr = false, "spec.helpers.kong_exec: `kong " .. cmd .. "` is not emulated by broker (no Kong CLI runs; "
      .. "`kong version` is, start_kong/stop_kong start Kong in process)"
  end
  if not returns then return ok, stderr, stdout end
  local exit_code = ok and 0 or 1
  return ok, exit_code, stdout or "", stderr
end
--- The emulated Kong's version as a `version` rock object, comparable with version("3.0.0").
function H.get_version()
  local parse = require "version"
  return parse(kong.version)
end
function H.get_available_port() return 20000 + math.random(1, 20000) end
function H.get_proxy_ip() return "127.0.0.1" end
-- Kong's test listeners: 9000 (HTTP/1.1), 9002 (HTTP/2 in plaintext, gRPC's), 9443 (TLS)
function H.get_proxy_port(ssl, http2)
  if ssl then return 9443 end
  return http2 and 9002 or 9000
end

-- Tries `try` until it succeeds or `timeout` seconds (5) have passed on the spec's clock. Nothing
-- waits: between tries the clock moves on by `step` (0.05 s), doubled each time, so a wait for a ttl
-- or a rate-limiting window takes a few tries; the last try is at the timeout.
local function tries(try, timeout, step)
  timeout, step = tonumber(timeout) or 5, tonumber(step) or 0.05
  local waited = 0
  while true do
    local ok, err = try()
    if ok then return true end
    if waited >= timeout then return false, err end
    local d = math.min(step, timeout - waited)
    ngx.sleep(d)
    require("broker.spec.timers").run()
    waited, step = waited + d, step * 2
  end
end

--- Calls f until it returns a truthy value, the spec's clock moving on between tries.
function H.wait_until(f, timeout, step)
  if tries(function() return f() end, timeout, step) then return true end
  error("wait_until() timed out after " .. tostring(timeout or 5) .. " seconds", 2)
end
function H.pwait_until(f, timeout, step)
  local ok, err = tries(function() return pcall(f) end, timeout, step)
  if not ok then error(err, 2) end
  return true
end

local function need_kong(what)
  if not started then error("spec.helpers." .. what .. "(): Kong is not started (call helpers.start_kong first)", 3) end
end
-- Kong's clients connect to the proxy listener's address, 0.0.0.0 in its test configuration: a request without a
-- Host header of its own carries that address and port, as resty.http sends it
function H.proxy_client(_, port, ip)
  need_kong("proxy_client")
  return client.new("proxy", ip or "0.0.0.0", tonumber(port) or 9000)
end
function H.proxy_ssl_client() need_kong("proxy_ssl_client") return client.new("proxy", "0.0.0.0", 9443) end
-- grpcurl as Kong's helper runs it, with Kong's test proto (hello.proto); the call runs in process, and
-- fails to dial Kong's listener while Kong is not started (grpcbin's own address always answers)
local HELLO_PROTO = "./spec/fixtures/grpc/hello.proto"
local function kong_down(port)
  if port == H.grpcbin_port or port == H.grpcbin_ssl_port then return nil end
  return function() return not started end
end
function H.proxy_client_grpc(host, port)
  return client.grpc(host or H.get_proxy_ip(), port or H.get_proxy_port(false, true),
    { ["-plaintext"] = true, ["-proto"] = HELLO_PROTO }, kong_down(port))
end
function H.proxy_client_grpcs(host, port)
  return client.grpc(host or H.get_proxy_ip(), port or H.get_proxy_port(true, true),
    { ["-insecure"] = true, ["-proto"] = HELLO_PROTO }, kong_down(port))
end
-- the client exists, so a before_each that opens one runs; each request it sends fails, naming the Admin API
function H.admin_client() return client.new("admin", "127.0.0.1", 9001) end
function H.admin_ssl_client() return client.new("admin", "127.0.0.1", 9444) end
-- helpers.setenv/unsetenv: Kong in process inherits the spec's environment, kept by the host (env.ts) since
-- the VM's own cannot be written: a variable set here is what a plugin's os.getenv and Kong's env vault see
local getenv = os.getenv
os.getenv = function(name)
  local v, unset = __spec_getenv(name)
  if unset then return nil end
  if v ~= nil then return v end
  return getenv(name)
end
function H.setenv(name, value) __spec_setenv(tostring(name), tostring(value)) return true end
function H.unsetenv(name) __spec_setenv(tostring(name)) return true end
-- helpers.execute(cmd, returns): /bin/sh in the plugin root through resty.shell (outside.ts), keeping up to
-- SHELL_OUTPUT_LIMIT bytes of each stream. Two answer shapes: with `returns`, the four values of Penlight's
-- executeex (succeeded, exit code, stdout, stderr); without, what a spec's assert takes: true, stderr, stdout when
-- the command succeeded, and false, stderr (no third value) when it did not.
local SHELL_OUTPUT_LIMIT = 100 * 2 ^ 20
function H.execute(cmd, returns)
  local ran = table.pack(require("resty.shell").run(cmd, nil, 0, SHELL_OUTPUT_LIMIT))
  local succeeded, out, err, exit_code = ran[1], ran[2], ran[3], ran[5]
  if returns then return succeeded, exit_code, out, err end
  if succeeded then return true, err, out end
  return false, err
end
-- servers a logging plugin sends to, on loopback (broker.spec.servers)
local servers = require "broker.spec.servers"
H.tcp_server, H.kill_tcp_server, H.udp_server = servers.tcp_server, servers.kill_tcp_server, servers.udp_server
-- a client of a started Kong's own listener on `port` (its proxy, a data plane's status API), or nil
local function listener_client(host, port)
  local listener = tonumber(port)
  if not (listener and started) then return nil end
  -- Kong's test proxy listeners (HTTP/1.1 and TLS), as proxy_client and proxy_ssl_client reach them
  if listener == H.get_proxy_port() or listener == H.get_proxy_port(true) then
    return client.new("proxy", host, listener)
  end
  for _, plane in ipairs({ listeners, data_plane }) do
    if plane.proxy[listener] then return client.new("proxy", host, listener) end
    if plane.status[listener] then return client.new("status", host, listener) end
  end
end
-- resty.http's way to the same listeners (a spec that streams through Kong connects with lua-resty-http)
H.__listener_client = listener_client
function H.http_client(host, port)
  local own = listener_client(host, port)
  if own then return own end
  local server = mocks.server(host, port or db.MOCK_PORT)
  if not server then
    error("spec.helpers.http_client(" .. tostring(host) .. ", " .. tostring(port) .. "): only the mock upstream ("
      .. db.MOCK_HOST .. ":" .. db.MOCK_PORT .. "), the Zipkin collector (" .. mocks.zipkin_host .. ":"
      .. mocks.zipkin_port .. ") and a started http_mock answer in process; other servers are not emulated by broker", 2)
  end
  return client.new(server, host, port)
end

return setmetatable(H, { __index = function(_, name)
  local field = REDIS_FIELDS[name]
  if field then
    local address = __spec_redis()
    require("broker.spec.sockets").unavailable = address.unavailable
    for k, f in pairs(REDIS_FIELDS) do rawset(H, k, address[f]) end
    return address[field]
  end
  error("spec.helpers." .. tostring(name) .. " is not emulated by broker yet (docs/pdk-test.md lists what is)", 2)
end })
