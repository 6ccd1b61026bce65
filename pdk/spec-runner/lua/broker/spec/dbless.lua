-- Kong without a database as spec.helpers starts it (written for broker): make_yaml_file(content) keeps
-- a declarative config under a file name, and start_kong{ database = "off" }'s declarative_config (that
-- name, or a file the spec has) or declarative_config_string replaces the in-memory database with it, as
-- Kong loads one at its start. make_yaml_file() without content is Kong's export of the database: here the database as
-- it stands, which start_kong then keeps.
local M = {}

M.AS_IT_IS = "(broker: the in-memory database is the declarative config)"
local files, made = {}, 0

--- Kong's make_yaml_file(content, filename): the name the config is kept under.
function M.make_yaml_file(content, filename)
  if content == nil then return M.AS_IT_IS end
  made = made + 1
  filename = filename or ("servroot/broker-declarative-" .. made .. ".yml")
  files[filename] = content
  return filename
end

--- Loads start_kong's declarative config, if it names one: true, or nil and why.
function M.start(env)
  -- Kong reads a declarative config only without a database
  if env.database ~= "off" then return true end
  local declarative = require "kong.db.declarative"
  local ok, err = true, nil
  local path = env.declarative_config
  if path ~= nil and path ~= M.AS_IT_IS then
    local text = files[path]
    if not text then
      local f, open_err = io.open(path, "r")
      if not f then return nil, "declarative_config " .. tostring(path) .. ": " .. tostring(open_err) end
      text = f:read("*a")
      f:close()
    end
    ok, err = declarative.load_config(text, path)
    if not ok then err = "declarative_config " .. tostring(path) .. ": " .. tostring(err) end
  elseif env.declarative_config_string ~= nil then
    ok, err = declarative.load_config(env.declarative_config_string, "declarative_config_string")
    if not ok then err = "declarative_config_string: " .. tostring(err) end
  end
  return ok, err
end

return M
