-- lua-cjson's interface with Kong's encoding rules ("\/", {} for an empty table, cjson.empty_array
-- and array_mt for []), on the host's JSON.
local H = __host
local array_mt = __broker_array_mt
local M = {
  null = H("null"),
  array_mt = array_mt,
  empty_array_mt = array_mt,
  empty_array = setmetatable({}, array_mt),
  _NAME = "cjson",
  _VERSION = "2.1.0.10",
}

function M.encode(v)
  local ok, out = pcall(H, "json_encode", v)
  if not ok then error(out, 2) end
  return out
end
function M.decode(s)
  if type(s) ~= "string" then error("bad argument #1 to 'decode' (string expected, got " .. type(s) .. ")", 2) end
  local ok, out = pcall(H, "json_decode", s)
  if not ok then error(out, 2) end
  return out
end
-- the settings broker keeps as Kong sets them; calling them is accepted
for _, name in ipairs({ "encode_empty_table_as_object", "decode_array_with_array_mt", "encode_escape_forward_slash",
  "encode_number_precision", "encode_sparse_array", "encode_max_depth", "decode_max_depth",
  "encode_invalid_numbers", "decode_invalid_numbers", "encode_keep_buffer", "encode_skip_unsupported_value_types" }) do
  M[name] = function() return true end
end
function M.new() return M end
return M
