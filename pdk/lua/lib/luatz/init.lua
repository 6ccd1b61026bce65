-- luatz (Kong ships it; kong.tools.timestamp requires it), written for broker from luatz's
-- documented API: the UTC half. Time zones need the zoneinfo database, which a replay does not
-- read: get_tz, time_in, localtime and ctime raise an error naming themselves.
local timetable = require "luatz.timetable"

local function time()
  if ngx and ngx.now then return ngx.now() end
  return os.time()
end

local function no_tz(name)
  return function()
    error("luatz." .. name .. " is not emulated by broker (time zones need the zoneinfo database); "
      .. "luatz.time, now, gmtime and timetable are", 2)
  end
end

return setmetatable({
  timetable = timetable,
  --- Seconds since the epoch, with a fraction (ngx.now under OpenResty).
  time = time,
  --- The current UTC time as a timetable.
  now = function() return timetable.new_from_timestamp(time()) end,
  --- A timestamp's UTC timetable, as C's gmtime.
  gmtime = function(ts) return timetable.new_from_timestamp(ts or time()) end,
  get_tz = no_tz("get_tz"),
  time_in = no_tz("time_in"),
  localtime = no_tz("localtime"),
  ctime = no_tz("ctime"),
}, {
  -- `parse` (parsers of date-time formats: `parse.rfc_3339`) is luatz.parse, loaded when first read
  __index = function(t, k)
    if k ~= "parse" then return nil end
    local parse = require "luatz.parse"
    rawset(t, "parse", parse)
    return parse
  end,
})
