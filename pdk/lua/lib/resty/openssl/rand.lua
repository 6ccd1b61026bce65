-- resty.openssl.rand on the host's CSPRNG (written for broker): bytes(length, private, strength).
local H = __host
return {
  _VERSION = "1.5.1",
  bytes = function(length)
    if type(length) ~= "number" or length < 0 then return nil, "rand.bytes: expect a non-negative number at #1" end
    return (H("random_bytes", length))
  end,
}
