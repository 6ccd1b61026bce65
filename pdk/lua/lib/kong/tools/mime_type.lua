-- kong.tools.mime_type, whose Kong version parses with LPeg (a C module). Written for broker from
-- its documented behaviour: parse_mime_type("application/json; Charset=utf-8") gives
-- "application", "json", { charset = "utf-8" } (parameter names lower-cased), or nil, nil, nil
-- for an invalid type; includes(this, other) compares { type, subtype } tables with `*`
-- wildcards and structured-syntax suffixes (`json` includes `vnd.api+json`).
local M = {}

-- RFC 2616's token: any CHAR but CTLs and separators
local TOKEN = "[%w!#%$%%&'%*%+%-%.%^_`|~]+"
local lower = string.lower

-- a quoted-string's content from `pos` (just past its opening quote): qdtext (any byte but CTLs and `"`) and
-- quoted-pairs (`\` and a CHAR), kept as written; the position past its closing quote, or nil
local function quoted(s, pos)
  local i = pos
  while true do
    local b = string.byte(s, i)
    if not b then return nil end
    if b == 34 then return string.sub(s, pos, i - 1), i + 1 end
    if b == 92 then
      local c = string.byte(s, i + 1)
      if not c or c > 127 then return nil end
      i = i + 2
    elseif b < 32 or b == 127 then
      return nil
    else
      i = i + 1
    end
  end
end

--- type, subtype (lower-cased) and parameters (names lower-cased) of a media type, or nil, nil, nil when it
--- is not one: `type/subtype` or `*`, then `;` parameters `name=value` (a token or a quoted string), spaces
--- and tabs only around each `;`, nothing after (a trailing `;` or space makes it invalid, as in Kong)
function M.parse_mime_type(mime_type)
  if type(mime_type) ~= "string" then return nil, nil, nil end
  local s = mime_type
  local t, sub, pos = string.match(s, "^(" .. TOKEN .. ")/(" .. TOKEN .. ")()")
  if t then
    t, sub = lower(t), lower(sub)
  elseif string.sub(s, 1, 1) == "*" then
    t, sub, pos = "*", "*", 2
  else
    return nil, nil, nil
  end
  local params = {}
  while pos <= #s do
    local name, at = string.match(s, "^[ \t]*;[ \t]*(" .. TOKEN .. ")=()", pos)
    if not name then return nil, nil, nil end
    local value, after = string.match(s, "^(" .. TOKEN .. ")()", at)
    if not value then
      if string.sub(s, at, at) ~= '"' then return nil, nil, nil end
      value, after = quoted(s, at + 1)
      if not value then return nil, nil, nil end
    end
    params[lower(name)] = value
    pos = after
  end
  return t, sub, params
end

--- Whether media type `this` includes `other` ({ type, subtype } tables, compared as written): `*` includes
--- anything, a `*` subtype any of the type, and a subtype without a suffix the subtypes with it as their suffix
--- (`json` includes `vnd.api+json`).
function M.includes(this, other)
  if type(this) ~= "table" then error("this must be a table", 2) end
  if type(other) ~= "table" then error("other must be a table", 2) end
  if this.type == "*" then return true end
  if this.type ~= other.type then return false end
  if this.subtype == other.subtype or this.subtype == "*" then return true end
  local a, b = tostring(this.subtype), tostring(other.subtype)
  return not string.find(a, "+", 1, true) and #b > #a and string.sub(b, -#a - 1) == "+" .. a
end

return M
