-- resty.aws (lua-resty-aws), written for broker: an instance keeps its config, and static credentials
-- (aws:Credentials { accessKeyId, secretAccessKey, sessionToken }) answer get() as lua-resty-aws's do.
-- Calling an AWS service (aws:Lambda(), aws:SecretsManager() …) or another credential provider stops
-- the run naming it: nothing of AWS is emulated and no connection is opened. It is a fallback: a
-- lua-resty-aws of your own on a Lua root or in the system folders wins.
local unsupported = require "broker.unsupported"

local Credentials = {}
Credentials.__index = Credentials

function Credentials:get()
  return true, self.accessKeyId, self.secretAccessKey, self.sessionToken, self.expireTime
end

function Credentials:needsRefresh() return false end
function Credentials:refresh() return true end

local Instance = {}

function Instance:Credentials(opts)
  opts = opts or {}
  if opts.accessKeyId == nil or opts.secretAccessKey == nil then
    return unsupported("resty.aws", "resty.aws:Credentials without accessKeyId and secretAccessKey (a provider chain)")
  end
  return setmetatable({ accessKeyId = opts.accessKeyId, secretAccessKey = opts.secretAccessKey,
    sessionToken = opts.sessionToken, expireTime = opts.expireTime or math.huge }, Credentials)
end

Instance.__index = function(_, name)
  if Instance[name] then return Instance[name] end
  if type(name) == "string" then
    return function() return unsupported("resty.aws", "resty.aws:" .. name) end
  end
end

local AWS = {}
setmetatable(AWS, { __call = function(_, config)
  local conf = {}
  for k, v in pairs(config or {}) do conf[k] = v end
  conf.region = conf.region or require("resty.aws.config").global.region
  return setmetatable({ config = conf }, Instance)
end })

return AWS
