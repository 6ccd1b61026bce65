-- resty.aws.config (lua-resty-aws), written for broker: the configuration lua-resty-aws reads from the
-- environment, as plain values. Nothing reads ~/.aws files or an instance's metadata service. It is a
-- fallback: a lua-resty-aws of your own on a Lua root or in the system folders wins.
local M = {}

local VARIABLES = { "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
  "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME", "AWS_WEB_IDENTITY_TOKEN_FILE",
  "AWS_STS_REGIONAL_ENDPOINTS" }

M.global = {}
for _, name in ipairs(VARIABLES) do M.global[name] = os.getenv(name) end
M.global.region = M.global.AWS_REGION or M.global.AWS_DEFAULT_REGION

--- The configuration as lua-resty-aws's get_config gives it: the environment's values.
function M.get_config()
  local out = {}
  for k, v in pairs(M.global) do out[k] = v end
  return out
end

--- The region the environment names (AWS_REGION, then AWS_DEFAULT_REGION), or nil and an error.
function M.get_region()
  if M.global.region then return M.global.region end
  return nil, "no region found"
end

return M
