-- resty.timerng (Kong's lua-resty-timer-ng) for `broker pdk test`, written for broker: its timers run on
-- the spec's clock, as ngx.timer.at's do (broker.spec.timers).
local timers = require "broker.spec.timers"
return { new = function() return timers.new() end }
