-- Kong's error.log as spec.helpers' Kong in process writes it (written for broker): every line a
-- proxied request logged (kong.log.*, ngx.log, a plugin's failure) in Kong's error.log format, kept
-- in memory for assert.logfile(); clean_logfile empties it.
local M = { lines = {} }

--- Adds the lines a request logged.
function M.append(list)
  for _, line in ipairs(list or {}) do M.lines[#M.lines + 1] = line end
end

function M.clean() M.lines = {} end

-- the prefixes of the Kong this spec started (servroot; a hybrid data plane's too: both are the one Kong in process,
-- whose lines all go to the one log kept here)
M.prefixes = { servroot = true }

-- the Kong this spec started writes to its prefix's error.log (servroot/logs/error.log)
function M.is_ours(path)
  if path == nil then return true end
  local prefix = type(path) == "string" and path:match("([^/]+)/logs/error%.log$")
  return prefix ~= nil and M.prefixes[prefix] == true
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

-- the spec reads the file itself (pl.file.read of test_conf.prefix .. "/" .. proxy_error_log): io.open of
-- that path opens the lines kept here; of the prefix's nginx configuration, what prefix.lua makes
function M.install()
  local open = io.open
  io.open = function(path, mode, ...)
    local reading = mode == nil or mode:sub(1, 1) == "r"
    local conf = reading and require("broker.spec.prefix").text(path)
    if conf or (type(path) == "string" and M.is_ours(path) and reading) then
      local text = conf or (table.concat(M.lines, "\n") .. (#M.lines > 0 and "\n" or ""))
      local at = 1
      local f = {}
      function f:read(what)
        what = what or "l"
        if what == "a" or what == "*a" then local rest = text:sub(at) at = #text + 1 return rest end
        if at > #text then return nil end
        local nl = text:find("\n", at, true) or (#text + 1)
        local line = text:sub(at, nl - 1)
        at = nl + 1
        return line
      end
      function f:lines() return function() return f:read("l") end end
      function f:close() return true end
      function f:seek() return 0 end
      return f
    end
    return open(path, mode, ...)
  end
end

return M
