-- pgmoon.json (written for broker from pgmoon's README): a value as a JSON SQL literal, and back. Kong's specs
-- require it to write plugin rows in SQL; the literal is the same here, though no Postgres runs it.
local cjson = require "cjson"

-- Postgres quotes a literal in single quotes, a quote inside doubled
local function literal(text) return "'" .. (text:gsub("'", "''")) .. "'" end

return {
  encode_json = function(value, escape_literal) return (escape_literal or literal)(cjson.encode(value)) end,
  decode_json = function(text) return cjson.decode(text) end,
}
