-- ngx.base64 (resty.core): base64url both ways (written for broker).
local H = __host
return {
  encode_base64url = function(s) return (H("encode_base64url", s)) end,
  decode_base64url = function(s) return H("decode_base64url", s) end,
}
