-- kong.db.schema.typedefs: the field types plugin schemas name, as Kong's type system defines
-- them (written for broker; checks that need Kong's C libraries are left to broker.schema).
local Schema = require "kong.db.schema"
local null = ngx.null
local T = {}

local function set_of(values, default)
  return { type = "set", required = true, default = default, elements = { type = "string", one_of = values } }
end

local HTTP = { "grpc", "grpcs", "http", "https" }
local ALL = { "grpc", "grpcs", "http", "https", "tcp", "tls", "tls_passthrough", "udp", "ws", "wss" }
T.protocols = set_of(ALL, { "grpc", "grpcs", "http", "https" })
T.protocols_http = set_of(HTTP, { "grpc", "grpcs", "http", "https" })
T.no_consumer = { type = "foreign", reference = "consumers", eq = null }
T.no_route = { type = "foreign", reference = "routes", eq = null }
T.no_service = { type = "foreign", reference = "services", eq = null }
T.no_consumer_group = { type = "foreign", reference = "consumer_groups", eq = null }
T.consumer = { type = "foreign", reference = "consumers" }
T.route = { type = "foreign", reference = "routes" }
T.service = { type = "foreign", reference = "services" }
T.uuid = { type = "string", uuid = true, auto = true }
T.auto_timestamp_s = { type = "integer", timestamp = true, auto = true }
T.auto_timestamp_ms = { type = "number", timestamp = true, auto = true }
T.name = { type = "string", unique = true }
T.tags = { type = "set", elements = { type = "string" } }
T.port = { type = "integer", between = { 0, 65535 } }
T.timeout = { type = "integer", between = { 0, 2147483646 } }
T.host = { type = "string", host = true }
T.host_with_optional_port = { type = "string" }
T.hosts = { type = "array", elements = T.host }
T.path = { type = "string", starts_with = "/" }
-- a URL needs a scheme and a host, as Kong's socket.url check asks
local function validate_url(v)
  local parsed, err = require("socket.url").parse(v)
  if not parsed then return nil, "could not parse url. " .. tostring(err) end
  if not parsed.host then return nil, "missing host in url" end
  if not parsed.scheme then return nil, "missing scheme in url" end
  return true
end
T.url = { type = "string", custom_validator = validate_url }
-- Kong's header names: letters, digits, '_' and '-' only, refused with Kong's message
T.header_name = { type = "string", custom_validator = function(name)
  if name:match("^[%w_-]+$") then return true end
  return nil, "bad header name '" .. name .. "', allowed characters are A-Z, a-z, 0-9, '_', and '-'"
end }
T.http_method = { type = "string", match = "^%u+$" }
T.ip = { type = "string", ip = true }
T.ip_or_cidr = { type = "string", ip_or_cidr = true }
T.cidr = { type = "string", ip_or_cidr = true }
T.cidr_v4 = { type = "string", ip_or_cidr = true }
T.cidr_v6 = { type = "string", ip_or_cidr = true }
-- a certificate and a key are read as Kong reads them (resty.openssl's x509 and pkey), loaded when a config is checked
T.certificate = { type = "string", custom_validator = function(cert)
  local _, err = require("resty.openssl.x509").new(cert)
  if err then return nil, "invalid certificate: " .. err end
  return true
end }
T.key = { type = "string", custom_validator = function(key)
  local _, err = require("resty.openssl.pkey").new(key)
  if err then return nil, "invalid key: " .. err end
  return true
end }
T.lua_code = { type = "map", keys = { type = "string", len_min = 1 }, values = { type = "string", len_min = 1 } }
T.semantic_version = { type = "string" }
T.sni = { type = "string" }
T.jwk = { type = "record", fields = {} }
T.redis_host = { type = "string" }
-- Kong's constants.DATABASE.DAO_MAX_TTL: the longest ttl its DAO accepts
T.ttl = { type = "number", between = { 0, 100000000 } }
T.regex_or_plain_pattern = { type = "string" }
T.pem = { type = "string" }
T.utf8_name = { type = "string" }
T.protocol = { type = "string", one_of = ALL }

-- The queue parameters of Kong's logging plugins (http-log, statsd, datadog, opentelemetry,
-- zipkin): kong.tools.queue reads them. max_bytes has no default (no byte limit); -1 as
-- concurrency_limit means one timer per entry.
T.queue = {
  type = "record",
  fields = {
    { max_batch_size = { type = "integer", default = 1, between = { 1, 1000000 } } },
    { max_coalescing_delay = { type = "number", default = 1, between = { 0, 3600 } } },
    { max_entries = { type = "integer", default = 10000, between = { 1, 1000000 } } },
    { max_bytes = { type = "integer" } },
    { max_retry_time = { type = "number", default = 60 } },
    { initial_retry_delay = { type = "number", default = 0.01, between = { 0.001, 1000000 } } },
    { max_retry_delay = { type = "number", default = 60, between = { 0.001, 1000000 } } },
    { concurrency_limit = { type = "integer", default = 1, one_of = { -1, 1 } } },
  },
}

-- The tracing headers of Kong's zipkin and opentelemetry: which to read, clear and write. Kong's own
-- kong.observability.tracing.propagation.schema when a checkout of Kong is on lua_path (its formats are
-- that version's), else the same record with Kong 3.9's formats.
local function propagation()
  local ok, kong_schema = pcall(require, "kong.observability.tracing.propagation.schema")
  if ok and type(kong_schema) == "table" then return kong_schema end
  local FORMATS = { "w3c", "b3", "b3-single", "jaeger", "ot", "datadog", "aws", "gcp" }
  local extractors, injectors = {}, { "preserve" }
  for _, f in ipairs(FORMATS) do
    if f ~= "b3-single" then extractors[#extractors + 1] = f end -- b3 reads both b3 forms
    injectors[#injectors + 1] = f
  end
  return Schema.define {
    type = "record",
    fields = {
      { extract = { type = "array", elements = { type = "string", one_of = extractors } } },
      { clear = { type = "array", elements = { type = "string", custom_validator = T.header_name.custom_validator } } },
      { inject = { type = "array", elements = { type = "string", one_of = injectors } } },
      { default_format = { type = "string", one_of = FORMATS, required = true } },
    },
  }
end
-- Kong's typedefs are callable: `typedefs.protocols { default = {...} }` gives a copy of the
-- field with the overrides applied (ip-restriction's schema calls it so).
local function with(def, overrides)
  local copy = {}
  for k, v in pairs(def) do copy[k] = v end
  for k, v in pairs(overrides or {}) do copy[k] = v end
  return setmetatable(copy, getmetatable(def))
end
local callable = { __call = with }
for _, def in pairs(T) do setmetatable(def, callable) end

-- A typedef broker has not written is refused by name when the schema reads it: a field without
-- its checks would accept configs Kong refuses.
return setmetatable(T, {
  __index = function(_, name)
    if name == "propagation" then -- read when a schema names it: most plugins never do
      T.propagation = setmetatable(propagation(), callable)
      return T.propagation
    end
    error("kong.db.schema.typedefs." .. tostring(name) .. " is not emulated by broker", 2)
  end,
})
