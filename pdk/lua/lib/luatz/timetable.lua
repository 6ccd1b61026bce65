-- luatz.timetable, written for broker from luatz's documented API: a broken-down date and time
-- with os.date's field names and no time zone, whose fields may lie outside their ranges until
-- :normalise() carries them (hour = 10, min = 100 is 11:40).
local floor, fmt, setmetatable = math.floor, string.format, setmetatable

local M = {}
local mt = { __index = M }

local function is_leap(y) return y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0) end
local MONTH_DAYS = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 }
local function month_days(y, m) return m == 2 and is_leap(y) and 29 or MONTH_DAYS[m] end

-- days since 1970-01-01 of a proleptic Gregorian date (month 1..12), and back; eras of 400 years
local function days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = floor(y / 400)
  local yoe = y - era * 400
  local mp = (m + 9) % 12
  local doy = floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + floor(yoe / 4) - floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end
local function civil_from_days(z)
  z = z + 719468
  local era = floor(z / 146097)
  local doe = z - era * 146097
  local yoe = floor((doe - floor(doe / 1460) + floor(doe / 36524) - floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + floor(yoe / 4) - floor(yoe / 100))
  local mp = floor((5 * doy + 2) / 153)
  local d = doy - floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return y, m, d
end

-- a whole number, as an integer when it is one (so fields print as 5, not 5.0)
local function whole(x) return math.tointeger(x) or x end

--- A timetable with the given fields (not normalised).
function M.new(year, month, day, hour, min, sec, yday, wday)
  return setmetatable({ year = year, month = month, day = day, hour = hour, min = min, sec = sec,
    yday = yday, wday = wday }, mt)
end

function M:clone()
  return M.new(self.year, self.month, self.day, self.hour, self.min, self.sec, self.yday, self.wday)
end

--- Carries fractions down (month 6.5 is half-way through June), then overflows up, in place.
function M:normalise()
  local year, month, day, hour, min, sec = self.year, self.month, self.day, self.hour, self.min, self.sec
  -- fractions down
  local f = year - floor(year)
  year, month = floor(year), month + f * 12
  f = month - floor(month)
  month = floor(month)
  local y0 = year + floor((month - 1) / 12)
  local m0 = (month - 1) % 12 + 1
  day = day + f * month_days(y0, m0)
  f = day - floor(day)
  day, hour = floor(day), hour + f * 24
  f = hour - floor(hour)
  hour, min = floor(hour), min + f * 60
  f = min - floor(min)
  min, sec = floor(min), sec + f * 60
  -- overflow up: seconds → minutes → hours → days, months → years, then days through the calendar
  min = min + floor(sec / 60)
  sec = sec % 60
  hour = hour + floor(min / 60)
  min = min % 60
  day = day + floor(hour / 24)
  hour = hour % 24
  year = year + floor((month - 1) / 12)
  month = (month - 1) % 12 + 1
  local days = days_from_civil(year, month, 1) + day - 1
  year, month, day = civil_from_days(days)
  self.year, self.month, self.day = whole(year), whole(month), whole(day)
  self.hour, self.min, self.sec = whole(hour), whole(min), math.tointeger(sec) or sec
  self.yday = whole(days - days_from_civil(year, 1, 1) + 1)
  self.wday = whole((days + 4) % 7 + 1) -- 1970-01-01 was a Thursday; 1 is Sunday, as os.date
  return self
end
M.normalize = M.normalise

--- Seconds since 1970-01-01T00:00:00 (the fields read as UTC), fractions kept.
function M:timestamp()
  local t = self:clone():normalise()
  return days_from_civil(t.year, t.month, t.day) * 86400 + t.hour * 3600 + t.min * 60 + t.sec
end

--- The (normalised) timetable of a timestamp in seconds since the epoch.
function M.new_from_timestamp(ts)
  if type(ts) ~= "number" then error("timestamp must be a number, got " .. type(ts), 2) end
  return M.new(1970, 1, 1, 0, 0, ts):normalise()
end

function M:unpack()
  return self.year, self.month, self.day, self.hour, self.min, self.sec, self.yday, self.wday
end

--- YYYY-MM-DDTHH:MM:SS, a fraction of a second kept; no offset (the timetable has none).
function M:rfc_3339()
  local sec = self.sec
  local s = fmt("%02d", floor(sec))
  if sec ~= floor(sec) then s = s .. fmt("%.6f", sec - floor(sec)):sub(2):gsub("0+$", "") end
  return fmt("%04d-%02d-%02dT%02d:%02d:", self.year, self.month, self.day, self.hour, self.min) .. s
end

mt.__tostring = M.rfc_3339
mt.__eq = function(a, b) return a:timestamp() == b:timestamp() end
mt.__lt = function(a, b) return a:timestamp() < b:timestamp() end
mt.__le = function(a, b) return a:timestamp() <= b:timestamp() end

M.timetable_mt = mt
return M
