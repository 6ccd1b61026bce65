-- kong.db.schema: enough of Kong's Schema for plugin schema.lua files (define, new, validators),
-- written for broker. Config checking itself is broker.schema.
local H = __host
local Schema = {}
Schema.__index = Schema

local validators = {}
function validators.is_regex(v)
  local ok, err = pcall(H, "re_check", v, "")
  if ok then return true end
  return nil, "not a valid regex: " .. tostring(v)
end
function validators.uuid(v)
  if require("kong.tools.uuid").is_valid_uuid(v) then return true end
  return nil, "expected a valid UUID"
end
Schema.validators = validators

function Schema.define(def) return setmetatable(def, Schema) end
function Schema.new(def) return setmetatable(def, Schema) end

return Schema
