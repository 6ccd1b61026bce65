-- resty.random: random bytes from the host (always strong; written for broker).
local H = __host
return { bytes = function(n) return (H("random_bytes", n)) end, number = function(a, b) return math.random(a, b) end }
