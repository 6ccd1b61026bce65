-- Kong's config processing for a plugin's schema.lua, written for broker: defaults filled
-- (nested records, arrays), the config refused with Kong's messages naming the field.
local H = __host
local null = ngx.null
-- on_deprecation(message, after): told of each deprecated field or shorthand a config uses (spec.helpers' error.log)
local M = { on_deprecation = nil }

local function copy(v)
  if type(v) ~= "table" then return v end
  local c = {}
  for k, x in pairs(v) do c[k] = copy(x) end
  return setmetatable(c, getmetatable(v))
end

local function fields_of(def)
  local list = {}
  for _, f in ipairs(def.fields or {}) do
    local name, field = next(f)
    list[#list + 1] = { name = name, def = field }
  end
  return list
end

local function is_array(t)
  if type(t) ~= "table" then return false end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  for i = 1, n do if t[i] == nil then return false end end
  return true
end

local TYPE_MSG = {
  string = "expected a string", number = "expected a number", integer = "expected an integer",
  boolean = "expected a boolean", array = "expected an array", set = "expected a set",
  map = "expected a map", record = "expected a record", foreign = "expected a foreign key",
}

local check

local function check_value(def, v)
  -- a condition's if_match may name no type (jwt's match_any on algorithm): the value's own
  local t = def.type or ((type(v) == "string" or type(v) == "number") and type(v) or nil)
  if t == "string" then
    if type(v) ~= "string" then return TYPE_MSG.string end
    -- a vault reference in a referenceable field is checked when it resolves, not as written (Kong's validate_field)
    if def.referenceable and require("broker.select").is_reference(v) then return nil end
    -- Kong accepts no empty string unless the field's len_min says otherwise (one_of and len_eq answer first)
    local len_min = def.len_min or ((def.one_of or def.len_eq) and 0 or 1)
    if #v < len_min then return "length must be at least " .. len_min end
    if def.len_max and #v > def.len_max then return "length must be at most " .. def.len_max end
    if def.len_eq and #v ~= def.len_eq then return "length must be " .. def.len_eq end
    if def.match and not v:match(def.match) then return "invalid value: " .. v end
    if def.starts_with and v:sub(1, #def.starts_with) ~= def.starts_with then
      return "should start with: " .. def.starts_with
    end
    if def.match_none then
      for _, m in ipairs(def.match_none) do if v:match(m.pattern) then return m.err end end
    end
    if def.match_all then
      for _, m in ipairs(def.match_all) do if not v:match(m.pattern) then return m.err end end
    end
    if def.match_any then
      local any = false
      for _, p in ipairs(def.match_any.patterns) do if v:match(p) then any = true end end
      if not any then return def.match_any.err or ("invalid value: " .. v) end
    end
    if def.is_regex then
      local ok = pcall(H, "re_check", v, "")
      if not ok then return "not a valid regex: " .. v end
    end
    if def.uuid and not require("kong.tools.uuid").is_valid_uuid(v) then return "expected a valid UUID" end
    if def.ip_or_cidr and not H("ip_valid_cidr", v) then return "invalid ip or cidr range: '" .. v .. "'" end
    if def.ip and not H("ip_parse", v) then return "invalid ip address: " .. v end
  elseif t == "number" or t == "integer" then
    if type(v) ~= "number" then return TYPE_MSG[t] end
    if t == "integer" and math.floor(v) ~= v then return TYPE_MSG.integer end
    if def.between and (v < def.between[1] or v > def.between[2]) then
      return "value should be between " .. def.between[1] .. " and " .. def.between[2]
    end
    if def.gt and not (v > def.gt) then return "value must be greater than " .. def.gt end
  elseif t == "boolean" then
    if type(v) ~= "boolean" then return TYPE_MSG.boolean end
  elseif t == "array" or t == "set" then
    if type(v) ~= "table" or not is_array(v) then return TYPE_MSG[t] end
    if def.len_min and #v < def.len_min then return "length must be at least " .. def.len_min end
    if def.len_max and #v > def.len_max then return "length must be at most " .. def.len_max end
  elseif t == "map" or t == "record" then
    if type(v) ~= "table" then return TYPE_MSG[t] end
    if t == "map" and (def.len_min or def.len_max) then
      -- a map's length is its number of keys
      local n = 0
      for _ in pairs(v) do n = n + 1 end
      if def.len_min and n < def.len_min then return "length must be at least " .. def.len_min end
      if def.len_max and n > def.len_max then return "length must be at most " .. def.len_max end
    end
  elseif t == "foreign" then
    if type(v) ~= "table" then return TYPE_MSG.foreign end
  end
  if def.one_of then
    for _, o in ipairs(def.one_of) do if o == v then goto ok end end
    do
      local names = {}
      for i, o in ipairs(def.one_of) do names[i] = tostring(o) end
      return "expected one of: " .. table.concat(names, ", ")
    end
    ::ok::
  end
  if def.not_one_of then
    for _, o in ipairs(def.not_one_of) do
      if o == v then
        local names = {}
        for i, x in ipairs(def.not_one_of) do names[i] = tostring(x) end
        return "must not be one of: " .. table.concat(names, ", ")
      end
    end
  end
  if def.contains ~= nil and type(v) == "table" then
    local found = false
    for _, x in ipairs(v) do if x == def.contains then found = true end end
    if not found then return "expected to contain: " .. tostring(def.contains) end
  end
  if def.eq ~= nil and v ~= def.eq then return "value must be " .. tostring(def.eq) end
  if def.ne ~= nil and v == def.ne then return "value must not be " .. tostring(def.ne) end
  if def.custom_validator then
    local ok, err = def.custom_validator(v)
    if not ok then return err or "invalid value" end
  end
end

-- a field's own `err` stands for whatever its validators say (not for its type's message), as in Kong's schema
local function validate(def, v)
  local msg = check_value(def, v)
  if msg and def.err and msg ~= TYPE_MSG[def.type or ""] then return def.err end
  return msg
end

local function same(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then return a == b end
  for k, v in pairs(a) do if not same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

-- value v of field def at path; returns the processed value, recording errors
local function process(def, v, path, errs)
  if v == nil or v == null then
    -- a required field given as null is missing, as Kong says of it; only an absent one takes the default
    if v == null and def.required and not def.auto then errs[path] = "required field missing" return nil end
    -- Kong stores a field given as null as null (its default is not filled); the plugin reads it as nil
    if v == null then return v end
    if def.default ~= nil and def.default ~= null then
      v = copy(def.default)
    elseif def.type == "record" and not def.required then
      local filled = process(def, {}, path, {})
      return next(filled) ~= nil and filled or nil
    elseif def.type == "record" then
      -- Kong expands a required record that is missing to its fields' defaults; what they lack is their error
      return process(def, {}, path, errs)
    else
      if def.required and not def.auto then errs[path] = "required field missing" end
      return nil
    end
  end
  if def.type == "record" and type(v) == "table" then return check(def, v, path, errs) end
  if def.type == "map" and type(v) == "table" then
    -- Kong checks a map's keys and values (both required) before the map's own validators, and the first that
    -- fails is the map's error (a record's values are checked field by field below)
    for k, x in pairs(v) do
      local m = def.keys and validate(def.keys, k)
      if not m and def.values and def.values.type ~= "record" then
        m = (x == null) and "required field missing" or validate(def.values, x)
      end
      if m then errs[path] = m return v end
    end
  end
  local msg = validate(def, v)
  if msg then errs[path] = msg return v end
  -- Kong warns of a deprecated field a config gives a value, unless it is the value it had by default before
  local deprecation = def.deprecation
  if deprecation and deprecation.message and M.on_deprecation
      and (deprecation.old_default == nil or not same(v, deprecation.old_default)) then
    M.on_deprecation(deprecation.message, deprecation.removal_in_version)
  end
  if (def.type == "array" or def.type == "set") and def.elements then
    local out = setmetatable({}, getmetatable(v))
    for i, x in ipairs(v) do out[i] = process(def.elements, x, path .. "[" .. i .. "]", errs) end
    if #out == 0 then setmetatable(out, __broker_array_mt) end
    return out
  end
  if def.type == "map" then
    local out = {}
    for k, x in pairs(v) do
      if def.keys then local m = validate(def.keys, k) if m then errs[path .. "." .. tostring(k)] = m end end
      local at, own = path .. "." .. tostring(k), {}
      out[k] = def.values and process(def.values, x, at, own) or x
      -- as Kong's validate_map: the first value that fails is the map's own error, a record's field errors
      -- named under the map without the key (response-ratelimiting's limits.seco, its periods' order)
      if next(own) then
        for e, m in pairs(own) do
          if e == at then errs[path] = m
          elseif e:sub(1, #at + 1) == at .. "." then errs[path .. e:sub(#at + 1)] = m
          else errs[e] = m end
        end
        return out
      end
    end
    return out
  end
  return v
end

-- a field by name, or by a dotted path from the entity ("config.redis.host")
local function field(t, name)
  for part in name:gmatch("[^.]+") do
    if type(t) ~= "table" then return nil end
    t = t[part]
  end
  return t
end

local function nonempty(v)
  return not (v == nil or v == null or (type(v) == "table" and next(v) == nil) or v == "")
end
local function quoted(words)
  local q = {}
  for i, w in ipairs(words) do q[i] = type(w) == "table" and "(" .. quoted(w) .. ")" or "'" .. w .. "'" end
  return table.concat(q, ", ")
end
local function count(out, names)
  local n, set = 0, {}
  for _, f in ipairs(names) do
    if nonempty(field(out, f)) then n = n + 1; set[#set + 1] = f end
  end
  return n, set
end

-- Kong's entity checkers (kong/db/schema/init.lua): each answers true, or nil, what its message
-- names, and a message of the schema's own (then_err …). `fields` lists the fields a check reads
-- (its argument when absent); `invalid_ok` checks run even when one of them has an error.
local CHECKS = {
  at_least_one_of = { invalid_ok = true, msg = "at least one of these fields must be non-empty: %s",
    fn = function(out, names) if count(out, names) > 0 then return true end return nil, quoted(names) end },
  only_one_of = { invalid_ok = true, msg = "exactly one of these fields must be non-empty: %s",
    fn = function(out, names) if count(out, names) == 1 then return true end return nil, quoted(names) end },
  distinct = { invalid_ok = true, msg = "values of these fields must be distinct: %s",
    fn = function(out, names)
      local seen = {}
      for _, f in ipairs(names) do
        local v = field(out, f)
        if nonempty(v) then
          if seen[v] then return nil, quoted(names) end
          seen[v] = true
        end
      end
      return true
    end },
  mutually_required = { msg = "all or none of these fields must be set: %s",
    fn = function(out, names)
      local n = count(out, names)
      if n == 0 or n == #names then return true end
      return nil, quoted(names)
    end },
  mutually_exclusive = { msg = "only one or none of these fields must be set: %s",
    fn = function(out, names) if count(out, names) <= 1 then return true end return nil, quoted(names) end },
  mutually_exclusive_sets = { msg = "these sets are mutually exclusive: %s",
    fields = function(arg) return {} end,
    fn = function(out, arg)
      local n1, s1 = count(out, arg.set1)
      local n2, s2 = count(out, arg.set2)
      if n1 > 0 and n2 > 0 then return nil, "(" .. quoted(s1) .. "), (" .. quoted(s2) .. ")" end
      return true
    end },
  conditional_at_least_one_of = { invalid_ok = true, msg = "at least one of these fields must be non-empty: %s",
    fields = function(arg) return { arg.if_field } end,
    fn = function(out, arg)
      local iv = field(out, arg.if_field)
      if iv == nil then return true end
      local names, err_fmt = arg.then_at_least_one_of, arg.then_err
      if validate(arg.if_match, iv) then
        if arg.else_match == nil or validate(arg.else_match, iv) then return true end
        names, err_fmt = arg.else_then_at_least_one_of, arg.else_then_err
      end
      if count(out, names) > 0 then return true end
      local list = quoted(names)
      return nil, list, err_fmt and err_fmt:format(list)
    end },
  custom_entity_check = {
    fields = function(arg) return arg.field_sources end,
    fn = function(out, arg)
      local input = {}
      for _, f in ipairs(arg.field_sources) do
        local t, v = input, field(out, f)
        local parts = {}
        for part in f:gmatch("[^.]+") do parts[#parts + 1] = part end
        for i = 1, #parts - 1 do t[parts[i]] = t[parts[i]] or {}; t = t[parts[i]] end
        t[parts[#parts]] = v
      end
      local ok, err = arg.fn(input)
      if ok then return true end
      return nil, nil, err or "entity check failed"
    end },
}

-- what spec.helpers' database checks a DAO's transformations with (Kong's own helpers of the same checks)
M.field, M.nonempty, M.all_or_none = field, nonempty, CHECKS.mutually_required.fn

-- Kong keeps every entity error of a config; they are reported together
local function entity_error(errs, msg)
  errs["@entity"] = errs["@entity"] and errs["@entity"] .. "; " .. msg or msg
end

local function entity_checks(def, out, path, errs)
  local prefix = path == "" and "" or path .. "."
  local function prefixed(names)
    local q = {}
    for i, f in ipairs(names) do q[i] = type(f) == "table" and prefixed(f) or prefix .. f end
    return q
  end
  for _, c in ipairs(def.entity_checks or {}) do
    local name, arg = next(c)
    local checker = CHECKS[name]
    if name == "conditional" then
      local iv = field(out, arg.if_field)
      -- Kong names a missing if_field for the check when the then_field is given (this wins over its
      -- "required field missing"); with neither given the check does not run
      if iv == nil and field(out, arg.then_field) ~= nil and not arg.run_with_missing_fields then
        errs[prefix .. arg.if_field] = "field required for entity check"
      end
      if iv ~= nil and not validate(arg.if_match, iv) then
        local tv = field(out, arg.then_field)
        local missing = tv == nil and arg.then_match.required
        local m = missing and "required field missing" or (tv ~= nil and validate(arg.then_match, tv))
        if m then
          errs[prefix .. arg.then_field] = m
          -- Kong names the check as well: the field whose value asked for it, or the schema's then_err
          entity_error(errs, (not missing and arg.then_err and arg.then_err:format(arg.if_field))
            or ("failed conditional validation given value of field '" .. arg.if_field .. "'"))
        end
      end
    elseif not checker then
      -- a check broker does not know must not pass silently
      entity_error(errs, "entity check '" .. tostring(name) .. "' is not emulated by broker")
    else
      local names = checker.fields and checker.fields(arg) or arg
      -- Kong fills a config's absent fields with null before its checks, so every check runs; one whose
      -- fields have errors runs only if it says so (or its argument does)
      local invalid = false
      for _, f in ipairs(names) do
        if errs[prefix .. f] then invalid = true end
      end
      if not invalid or checker.invalid_ok or arg.run_with_invalid_fields then
        local ok, what, own = checker.fn(out, arg)
        if not ok then
          -- inside a record, the fields are named from the config ('config.redis.host' style)
          if prefix ~= "" and what and type(arg[1]) == "string" then what = quoted(prefixed(arg)) end
          entity_error(errs, own or (checker.msg and what and checker.msg:format(what)) or what)
        end
      end
    end
  end
end

-- whether a field at `path` (or under it; "" is the whole config) has an error
local function errors_under(errs, path)
  for k in pairs(errs) do
    if path == "" or k == path or k:sub(1, #path + 1) == path .. "." or k:sub(1, #path + 1) == path .. "[" then
      return true
    end
  end
  return false
end

local function table_path(t, path)
  for _, k in ipairs(path or {}) do
    if type(t) ~= "table" then return nil end
    t = t[k]
  end
  return t
end

-- Kong's shorthand_fields (its process_auto_fields): a shorthand's value moves where its func says. A
-- table it returns merges with the field there: a deprecated shorthand (rate-limiting's redis_host) gives
-- way to a value the new field has; a shorthand given with a different value in its new field is refused.
local function shorthands(def, conf, path, errs, known)
  for _, s in ipairs(def.shorthand_fields or {}) do
    local name, sdef = next(s)
    local value = conf[name]
    if value ~= nil then
      known[name] = true
      local key = path == "" and name or path .. "." .. name
      local bad = validate(sdef, value)
      local deprecation = sdef.deprecation
      local replaced = deprecation and deprecation.replaced_with or nil
      if not bad and value ~= null and deprecation then
        local paths = {}
        for _, r in ipairs(replaced or {}) do paths[#paths + 1] = { path = r.path, reverse = r.reverse_mapping_function } end
        if not replaced and sdef.translate_backwards then paths[1] = { path = sdef.translate_backwards } end
        for _, p in ipairs(paths) do
          local now = p.reverse and p.reverse(conf) or table_path(conf, p.path)
          if now ~= nil and now ~= null and not same(now, value) then
            bad = string.format("both deprecated and new field are used but their values mismatch: %s = %s vs %s = %s",
              name, tostring(value), table.concat(p.path, "."), tostring(now))
            break
          end
        end
      end
      if bad then
        errs[key] = bad
      else
        -- Kong warns of each deprecated field a config uses (kong.deprecation, in the error.log)
        if deprecation and deprecation.message and M.on_deprecation then
          M.on_deprecation(deprecation.message, deprecation.removal_in_version)
        end
        conf[name] = nil
        for k, v in pairs(sdef.func(value) or {}) do
          local there = conf[k]
          if type(v) == "table" then
            local merged = {}
            local first, second = v, (there ~= nil and there ~= null) and there or {}
            if not deprecation then first, second = second, first end
            for x, y in pairs(first) do merged[x] = y end
            for x, y in pairs(second) do
              if not deprecation or merged[x] == nil or y ~= null then merged[x] = y end
            end
            conf[k] = merged
          elseif not deprecation or there == nil or there == null then
            conf[k] = v
          end
        end
      end
    end
  end
end

check = function(def, conf, path, errs)
  local out = {}
  local known = {}
  shorthands(def, conf, path, errs, known)
  for _, f in ipairs(fields_of(def)) do
    known[f.name] = true
    out[f.name] = process(f.def, conf[f.name], path == "" and f.name or path .. "." .. f.name, errs)
  end
  for k in pairs(conf) do
    if not known[k] then errs[path == "" and tostring(k) or path .. "." .. tostring(k)] = "unknown field" end
  end
  entity_checks(def, out, path, errs)
  -- a record's own validator runs once its fields are valid, and names the record (the config as a whole:
  -- @config, its own error in Kong's shape, where entity checks are @entity's list)
  if def.custom_validator and not errors_under(errs, path) then
    local ok, err = def.custom_validator(out)
    if not ok then errs[path == "" and "@config" or path] = err or "invalid value" end
  end
  return out
end

--- The config with its defaults, or nil and { [field path] = message }.
function M.process(schema, conf)
  local config_def
  for _, f in ipairs(fields_of(schema)) do
    if f.name == "config" then config_def = f.def end
  end
  if not config_def then return conf end
  local errs = {}
  local out = check(config_def, conf or {}, "", errs)
  -- the plugin schema's own checks name fields from the entity ("config.second"), as Kong's do
  local entity_errs = {}
  entity_checks(schema, { config = out }, "", entity_errs)
  for k, m in pairs(entity_errs) do
    if k == "@entity" then entity_error(errs, m) else errs[(k:gsub("^config%.", ""))] = m end
  end
  if next(errs) then return nil, errs end
  return out
end

local function config_def(schema)
  for _, f in ipairs(fields_of(schema)) do
    if f.name == "config" then return f.def end
  end
end

--- A config patch with the shorthand fields of the config's own level moved where they go (Kong
--- translates a PATCH before it merges it with the stored row), or nil and { [field] = message }.
function M.shorthands(schema, conf)
  local def = config_def(schema)
  if not def or type(conf) ~= "table" then return conf end
  local errs, out = {}, copy(conf)
  shorthands(def, out, "", errs, {})
  if next(errs) then return nil, errs end
  return out
end

-- Kong's read of a stored row (its `select` context): a required field that holds null takes its
-- default, in nested records too. Only a row written around the schema (raw SQL) can hold one.
local function null_defaults(def, conf)
  local out
  for _, f in ipairs(fields_of(def)) do
    local v, fd = conf[f.name], f.def
    local now = v
    if v == null and fd.required == true and fd.default ~= nil and fd.default ~= null then
      now = copy(fd.default)
    elseif fd.type == "record" and type(v) == "table" then
      now = null_defaults(fd, v)
    end
    if now ~= v then
      out = out or copy(conf)
      out[f.name] = now
    end
  end
  return out or conf
end

--- The config as Kong reads it from the database: a required field stored as null reads as its default.
function M.as_read(schema, conf)
  local def = config_def(schema)
  if not def or type(conf) ~= "table" then return conf end
  return null_defaults(def, conf)
end

--- The config as Kong reads it back: each deprecated shorthand field shown beside its new field, with
--- that field's value (rate-limiting's redis_host = redis.host).
function M.with_shorthands(schema, conf)
  local def = config_def(schema)
  if not def or type(conf) ~= "table" or not def.shorthand_fields then return conf end
  local out = copy(conf)
  for _, s in ipairs(def.shorthand_fields) do
    local name, sdef = next(s)
    local replaced = sdef.deprecation and sdef.deprecation.replaced_with and sdef.deprecation.replaced_with[1]
    if replaced then
      out[name] = replaced.reverse_mapping_function and replaced.reverse_mapping_function(conf)
        or table_path(conf, replaced.path)
    elseif sdef.translate_backwards then
      out[name] = table_path(conf, sdef.translate_backwards)
    end
  end
  return out
end

--- The field names of a record in a plugin schema's config ("" the config itself, "stamp" a record in
--- it), for the closest to a misspelt one.
function M.field_names(schema, path)
  local def
  for _, f in ipairs(fields_of(schema)) do
    if f.name == "config" then def = f.def end
  end
  for part in string.gmatch(path, "[^.]+") do
    local inner
    for _, f in ipairs(fields_of(def or {})) do
      if f.name == part then inner = f.def end
    end
    def = inner
  end
  local names = {}
  for _, f in ipairs(fields_of(def or {})) do names[#names + 1] = f.name end
  return names
end

return M
