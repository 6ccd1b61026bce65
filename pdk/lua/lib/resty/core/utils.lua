-- resty.core.utils (written for broker).
local M = {}
function M.str_replace_char(s, find, repl)
  return (s:gsub(find:gsub("%p", "%%%0"), (repl:gsub("%%", "%%%%"))))
end
return M
