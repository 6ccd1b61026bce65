-- resty.core.time (FFI in OpenResty; written for broker): the monotonic clock and ngx's time functions.
local H = __host
return {
  monotonic_msec = function() return (H("monotonic_msec")) end,
  monotonic_time = function() return H("monotonic_msec") / 1000 end,
}
