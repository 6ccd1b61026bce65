-- spec.hybrid, broker's own: run_for_each_deploy runs a spec body once in the traditional deploy and, for each
-- strategy with a database, in the hybrid deploys: a control plane and a data plane (spec.helpers' hybrid mode, one
-- Kong in process), with clustering's RPC off, on, and on with RPC sync. Each run gets helpers of its own, whose
-- start_kong and stop_kong start and stop the whole deploy and whose format_tags names it (clean_logfile is
-- spec.helpers' own: both planes write the one error.log it keeps).
local helpers = require "spec.helpers"
local M = {}

-- the options a hybrid deploy sets itself: a spec's env must leave them out
local DEPLOY_OPTIONS = { "prefix", "role", "cluster_cert", "cluster_cert_key", "lua_ssl_trusted_certificate",
  "cluster_rpc", "cluster_rpc_sync", "cluster_listen", "cluster_telemetry_listen", "cluster_control_plane",
  "cluster_telemetry_endpoint" }

local function with(env, extra)
  local out = {}
  for k, v in pairs(env or {}) do out[k] = v end
  for k, v in pairs(extra) do out[k] = v end
  return out
end

local function patched(strategy, deploy, rpc, rpc_sync, opts)
  local own = {}
  local hybrid = deploy == "hybrid"
  local prefix

  function own.start_kong(env, tables, preserve_prefix, fixtures)
    env = env or {}
    if not hybrid then
      local ok, err = helpers.start_kong(env, tables, preserve_prefix, fixtures)
      if ok then prefix = env.prefix or "servroot" end
      own.data_plane = helpers.get_running_conf(prefix)
      return ok, err
    end
    for _, name in ipairs(DEPLOY_OPTIONS) do
      if env[name] ~= nil then error("spec.hybrid: a hybrid deploy sets " .. name .. " itself; start_kong's env must not", 2) end
    end
    if env.database ~= nil and env.database ~= strategy then
      error("spec.hybrid: a hybrid deploy's database is its strategy (" .. strategy .. "), not " .. tostring(env.database), 2)
    end
    local cluster = { cluster_rpc = rpc, cluster_rpc_sync = rpc_sync, cluster_cert = "spec/fixtures/kong_clustering.crt",
      cluster_cert_key = "spec/fixtures/kong_clustering.key" }
    assert(helpers.start_kong(with(env, with(cluster, { role = "control_plane", database = strategy, prefix = "servroot",
      cluster_listen = "127.0.0.1:9005", cluster_telemetry_listen = "127.0.0.1:9006" })), tables, preserve_prefix, fixtures))
    assert(helpers.start_kong(with(env, with(cluster, { role = "data_plane", database = "off", prefix = "servroot2",
      cluster_control_plane = "127.0.0.1:9005", cluster_telemetry_endpoint = "127.0.0.1:9006" }))))
    own.control_plane = helpers.get_running_conf("servroot")
    own.data_plane = helpers.get_running_conf("servroot2")
    -- with RPC sync, the deploy is ready once the data plane says its full sync ended (opts.dont_wait_full_sync: not waited)
    local waits = opts.dont_wait_full_sync ~= true
    if waits and rpc_sync == "on" then
      assert.logfile(own.data_plane.nginx_err_logs).has.line("[kong.sync.v2] full sync ends", true, 10)
    end
    return true
  end

  function own.stop_kong(stop_prefix, ...)
    local ok, err
    if hybrid then
      if stop_prefix ~= nil then error("spec.hybrid: a hybrid deploy stops whole; stop_kong takes no prefix", 2) end
      ok, err = helpers.stop_kong("servroot2", ...)
      if ok then ok, err = helpers.stop_kong("servroot", ...) end
    else
      ok, err = helpers.stop_kong(stop_prefix, ...)
    end
    prefix, own.control_plane, own.data_plane = nil, nil, nil
    return ok, err
  end

  function own.get_prefix_for(role)
    if not hybrid then return prefix end
    return (role == nil or role == "data_plane") and "servroot2" or "servroot"
  end

  function own.wait_for_all_config_update(...)
    if strategy ~= "off" then return helpers.wait_for_all_config_update(...) end
  end

  function own.format_tags()
    return "#" .. strategy .. " #" .. deploy .. (rpc == "on" and " #rpc" or "") .. (rpc_sync == "on" and " #rpc_sync" or "")
  end

  function own.reload_helpers() return patched(strategy, deploy, rpc, rpc_sync, opts) end

  -- the planes' configurations are nil while the deploy is not started (spec.helpers has no such fields)
  return setmetatable(own, { __index = function(_, name)
    if name == "control_plane" or name == "data_plane" then return nil end
    return helpers[name]
  end })
end

-- clustering's RPC settings a hybrid deploy runs with: off, on, on with RPC sync
local RPC = { { "off", "off" }, { "on", "off" }, { "on", "on" } }

function M.run_for_each_deploy(opts, fn)
  opts = opts or {}
  local each = opts.strategies_iterator or helpers.each_strategy
  for _, strategy in each() do
    fn(patched(strategy, "traditional", "off", "off", opts), strategy, "traditional", "off", "off")
    -- a database-less Kong has no hybrid deploy
    if strategy ~= "off" then
      for _, r in ipairs(RPC) do
        fn(patched(strategy, "hybrid", r[1], r[2], opts), strategy, "hybrid", r[1], r[2])
      end
    end
  end
end

return M
