-- luatz.parse, written for broker from luatz's documented API: `rfc_3339(text [, init])` gives the timetable
-- of the time as written (its wall-clock fields) and the time zone offset in seconds (0 for `Z`), or nil when
-- the text is not an RFC 3339 date-time.
local timetable = require "luatz.timetable"

local function rfc_3339(text, init)
  if type(text) ~= "string" then return nil end
  local year, month, day, hour, min, sec, rest =
    text:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)[Tt ](%d%d):(%d%d):(%d%d%.?%d*)()", init)
  if not year then return nil end
  local tt = timetable.new(tonumber(year), tonumber(month), tonumber(day), tonumber(hour), tonumber(min),
    tonumber(sec))
  local zone = text:sub(rest)
  local offset
  if zone:match("^[Zz]") then
    offset = 0
  else
    local sign, oh, om = zone:match("^([+-])(%d%d):?(%d%d)")
    if sign then
      offset = (tonumber(oh) * 3600 + tonumber(om) * 60) * (sign == "-" and -1 or 1)
    end
  end
  return tt, offset
end

return { rfc_3339 = rfc_3339 }
