-- The `say` string registry luassert messages come from (written for broker): say:set(key, text),
-- say(key, values) fills the text's %s with the values; an unknown key gives nil.
local strings = {}
local say = {}

function say:set(key, value) strings[key] = value end
function say:set_namespace() end

return setmetatable(say, {
  __call = function(_, key, values)
    local s = strings[key]
    if s == nil or values == nil then return s end
    local list = {}
    for i = 1, values.n or #values do list[i] = tostring(values[i]) end
    local ok, out = pcall(string.format, s, table.unpack(list))
    return ok and out or s
  end,
})
