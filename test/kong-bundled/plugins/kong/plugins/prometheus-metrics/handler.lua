-- Ours, for the prometheus scenarios: after prometheus's log phase (a lower PRIORITY), writes what its
-- /metrics endpoint would show (exporter.metric_data) to the log, one notice per metric line, where
-- expect.logs reads them.
local exporter = require "kong.plugins.prometheus.exporter"

local Metrics = { PRIORITY = 1, VERSION = "0.1.0" }

function Metrics:log()
  local out = {}
  exporter.metric_data(function(s) out[#out + 1] = s end)
  for line in table.concat(out):gmatch("[^\n]+") do
    if not line:find("^#") then kong.log.notice(line) end
  end
end

return Metrics
