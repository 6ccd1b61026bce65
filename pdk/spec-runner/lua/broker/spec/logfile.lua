-- Kong's error.log as spec.helpers' Kong in process writes it (written for broker): every line a
-- proxied request logged (kong.log.*, ngx.log, a plugin's failure) in Kong's error.log format, kept
-- in memory for assert.logfile(); clean_logfile empties it.
local M = { lines = {} }

--- Adds the lines a request logged.
function M.append(list)
  for _, line in ipairs(list or {}) do M.lines[#M.lines + 1] = line end
end

function M.clean() M.lines = {} end

-- the Kong this spec started writes to its prefix's error.log (servroot/logs/error.log)
function M.is_ours(path)
  return path == nil or path:match("^%./?servroot/logs/error%.log$") or path:match("^servroot/logs/error%.log$")
    or path:match("/servroot/logs/error%.log$")
end

--- The lines of `path`: ours, or a real file's; nil and a message when neither.
function M.read(path)
  if M.is_ours(path) then return M.lines end
  local f = io.open(path, "r")
  if not f then
    return nil, "assert.logfile(\"" .. tostring(path) .. "\"): only the error.log of the Kong spec.helpers started "
      .. "(servroot/logs/error.log) is kept by broker; this file does not exist"
  end
  local out = {}
  for line in f:lines() do out[#out + 1] = line end
  f:close()
  return out
end

return M
