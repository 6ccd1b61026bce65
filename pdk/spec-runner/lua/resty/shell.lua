-- resty.shell for `broker pdk test` (written for broker from lua-resty-shell's documentation): a spec's
-- shell command (Kong's specs `cat` a log or run a tool) runs with /bin/sh in the plugin root, as
-- busted would run it under pongo. run(cmd, stdin, timeout_ms, max_size) → ok, stdout, stderr, reason, status.
local M = { _VERSION = "0.03" }

function M.run(cmd, stdin, timeout, max_size)
  if type(cmd) == "table" then cmd = table.concat(cmd, " ") end
  if type(cmd) ~= "string" then error("bad cmd argument: string or table expected", 2) end
  local r = __spec_shell(cmd, stdin, tonumber(timeout) or 10000, tonumber(max_size) or 128 * 1024)
  return r.ok, r.stdout, r.stderr, r.reason, r.status
end

return M
