-- spec.hybrid, broker's own: run_for_each_deploy runs a spec body for each strategy in the
-- traditional deploy, with helpers whose format_tags names it; hybrid deploys (a control plane and
-- a data plane) are not emulated, and each shows as a pending test saying so.
local helpers = require "spec.helpers"
local M = {}

local function patched(strategy, deploy)
  local own = {
    format_tags = function() return "#" .. strategy .. " #" .. deploy end,
    get_prefix_for = function() return "servroot" end,
  }
  own.reload_helpers = function() return patched(strategy, deploy) end
  return setmetatable(own, { __index = helpers })
end

function M.run_for_each_deploy(opts, fn)
  opts = opts or {}
  local each = opts.strategies_iterator or helpers.each_strategy
  for _, strategy in each() do
    fn(patched(strategy, "traditional"), strategy, "traditional", "off", "off")
    pending("[#" .. strategy .. " #hybrid] hybrid deploys are not emulated by broker (the traditional one ran)")
  end
end

return M
