-- ngx.resp (lua-resty-core): add_header, a response header's value added to the ones it has (written for broker).
local H = __host
return {
  add_header = function(name, value)
    if type(name) ~= "string" then error("bad argument #1 to 'add_header' (string expected, got " .. type(name) .. ")", 2) end
    if value == nil then error("bad argument #2 to 'add_header' (string, number or table expected, got nil)", 2) end
    H("resp_header_add", name, value)
  end,
}
