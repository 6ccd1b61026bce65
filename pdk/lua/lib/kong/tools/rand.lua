-- kong.tools.rand (FFI over OpenSSL and /dev/urandom in Kong), written for broker on the
-- host's CSPRNG through resty.random.
local random_bytes = require("resty.random").bytes
local encode_base64 = ngx.encode_base64
local random, sbyte, schar = math.random, string.byte, string.char

local M = {}

--- n strong random bytes (`urandom` asks Kong for /dev/urandom; both come from one CSPRNG here).
function M.get_rand_bytes(n_bytes, urandom) -- luacheck: ignore urandom
  return random_bytes(n_bytes)
end

local SLASH, PLUS = sbyte("/"), sbyte("+")

--- 32 characters of base64 over 24 random bytes, "/" and "+" replaced by letters, as Kong's.
function M.random_string()
  local b64 = encode_base64(random_bytes(24), true)
  local out = {}
  for i = 1, 32 do
    local b = sbyte(b64, i)
    if b == SLASH then b = random(65, 90) elseif b == PLUS then b = random(97, 122) end
    out[i] = schar(b)
  end
  return table.concat(out)
end

return M
