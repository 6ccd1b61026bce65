-- kong.tools.uuid (uuid, is_valid_uuid), whose Kong version sits on FFI-backed resty.jit-uuid.
local uuid = require "resty.jit-uuid"
return {
  uuid = uuid.generate_v4,
  is_valid_uuid = function(s) return s ~= "00000000-0000-0000-0000-000000000000" and uuid.is_valid(s) end,
}
