-- The bodies Kong's Admin API reads (written for broker): JSON, or a form whose `a.b[1]=x` keys nest
-- and whose strings become the entity schema's types (numbers, booleans, arrays, foreign keys), as
-- Kong decodes form arguments by the schema.
local cjson = require "cjson.safe"
local entities = require "broker.spec.entities"
local M = {}

-- `a.b[1]=x` form keys as the nested tables Kong's Admin API makes of them
local function nest(args)
  local out = {}
  for key, value in pairs(args) do
    local t, parts = out, {}
    for part in key:gsub("%[%]$", ""):gsub("%[(%d+)%]", ".%1"):gmatch("[^.]+") do parts[#parts + 1] = tonumber(part) or part end
    for i = 1, #parts - 1 do
      if type(t[parts[i]]) ~= "table" then t[parts[i]] = {} end
      t = t[parts[i]]
    end
    local last = parts[#parts]
    if value == true then value = "" end
    t[last] = value
  end
  return out
end

-- a form's strings as the schema's types (Kong decodes form arguments by the entity's schema)
local function coerce(fields, t)
  if type(t) ~= "table" then return t end
  for _, f in ipairs(fields or {}) do
    local name, def = next(f)
    local v = t[name]
    if v ~= nil then
      if (def.type == "array" or def.type == "set") then
        if type(v) ~= "table" then v = { v } end
        local list = {}
        for k, x in pairs(v) do if type(k) == "number" then list[#list + 1] = { k, x } end end
        table.sort(list, function(a, b) return a[1] < b[1] end)
        local arr = setmetatable({}, cjson.array_mt)
        for i, p in ipairs(list) do arr[i] = def.elements and def.elements.type == "record" and coerce(def.elements.fields, p[2]) or p[2] end
        v = arr
      elseif (def.type == "number" or def.type == "integer") and type(v) == "string" then
        v = tonumber(v) or v
      elseif def.type == "boolean" and type(v) == "string" then
        if v == "true" then v = true elseif v == "false" then v = false end
      elseif def.type == "record" then
        v = coerce(def.fields, v)
      elseif def.type == "foreign" and type(v) == "string" then
        v = { id = v }
      end
      t[name] = v
    end
  end
  return t
end

local CORE_FIELDS = {
  routes = { { hosts = { type = "set" } }, { paths = { type = "set" } }, { methods = { type = "set" } },
    { protocols = { type = "set" } }, { snis = { type = "set" } }, { strip_path = { type = "boolean" } },
    { preserve_host = { type = "boolean" } }, { regex_priority = { type = "integer" } },
    { service = { type = "foreign" } }, { tags = { type = "set" } } },
  services = { { port = { type = "integer" } }, { retries = { type = "integer" } }, { enabled = { type = "boolean" } },
    { connect_timeout = { type = "integer" } }, { read_timeout = { type = "integer" } },
    { write_timeout = { type = "integer" } }, { tags = { type = "set" } } },
  consumers = { { tags = { type = "set" } } },
  plugins = { { enabled = { type = "boolean" } }, { protocols = { type = "set" } }, { route = { type = "foreign" } },
    { service = { type = "foreign" } }, { consumer = { type = "foreign" } }, { tags = { type = "set" } } },
}

local function coerce_form(dao, body)
  if CORE_FIELDS[dao] then coerce(CORE_FIELDS[dao], body) end
  if dao == "plugins" and type(body.name) == "string" then
    local ok, schema = pcall(require, "kong.plugins." .. body.name .. ".schema")
    if ok and type(schema) == "table" then
      for _, f in ipairs(schema.fields or {}) do
        local name, def = next(f)
        if name == "config" and type(body.config) == "table" then coerce(def.fields, body.config) end
      end
    end
  end
  local info = entities.daos()[dao]
  if info then coerce(info.def.fields, body) end
  return body
end

--- A request's body as the entity `dao` takes it, or nil and why it cannot be read.
function M.decode(req, dao)
  local body = req.body
  if body == nil or body == "" then return {} end
  local ctype = ""
  for k, v in pairs(req.headers or {}) do if tostring(k):lower() == "content-type" then ctype = tostring(v):lower() end end
  if ctype:find("application/json", 1, true) or ctype == "" and body:match("^%s*[{%[]") then
    local t = cjson.decode(body)
    if type(t) ~= "table" then return nil, "Cannot parse JSON body" end
    return t
  end
  if ctype:find("www-form-urlencoded", 1, true) or ctype == "" then
    return coerce_form(dao, nest(ngx.decode_args(body, 0)))
  end
  return nil, "Content-Type not supported: " .. ctype
end

return M
