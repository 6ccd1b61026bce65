-- start_kong's `fixtures.http_mock`: nginx server blocks Kong renders into its configuration (written for broker from
-- nginx's configuration syntax and Kong's template rules). Each block is rendered as Kong renders a template (`>`
-- lines are Lua, `$(expr)` and `${{NAME}}` values of the configuration), read as nginx reads it (a `*_by_lua_block`'s
-- body is Lua, its braces and strings kept whole), and each `server` becomes an http_mock on its `listen` port, its
-- locations routes of the same shape spec.helpers.http_mock takes. What has no such route raises naming it.
local M = {}

-- server directives that change nothing an answer in process shows (TLS is not spoken; logs are not kept)
local SERVER_IGNORED = { server_name = true, ssl_certificate = true, ssl_certificate_key = true, ssl_protocols = true,
  ssl_ciphers = true, ssl_prefer_server_ciphers = true, ssl_session_cache = true, ssl_session_timeout = true,
  error_log = true, access_log = true, keepalive_timeout = true, keepalive_requests = true, http2 = true,
  client_max_body_size = true, client_body_buffer_size = true, charset = true,
  -- chunked answers are nginx's default; a server that proxies nothing buffers nothing
  chunked_transfer_encoding = true, proxy_buffering = true, proxy_buffer_size = true, proxy_buffers = true }
local PHASES = { access_by_lua_block = "access", content_by_lua_block = "content", log_by_lua_block = "log" }

-- Kong's template: ${{NAME}} is the configuration's `name`; `>` lines and $(expr) through Penlight's template
local function render(text, name)
  local conf = rawget(_G, "kong") and kong.configuration or {}
  text = text:gsub("%${{([%w_]+)}}", function(key) return tostring(conf[key:lower()] or "") end)
  local env = setmetatable({ _escape = ">", pairs = pairs, ipairs = ipairs, tostring = tostring,
    os = { getenv = os.getenv }, ssl_cert = {}, ssl_cert_key = {} }, { __index = function(_, k)
      local ok, v = pcall(function() return conf[k] end)
      return ok and v or nil
    end })
  local out, err = require("pl.template").substitute(text, env)
  if not out then error("fixtures.http_mock." .. name .. ": the template does not render: " .. tostring(err), 0) end
  return out
end

-- the end of a Lua string or comment that starts at `i`, or nil when none starts there
local function skip_lua(s, i)
  local c = s:sub(i, i)
  if c == '"' or c == "'" then
    local j = i + 1
    while j <= #s do
      local d = s:sub(j, j)
      if d == "\\" then j = j + 2
      elseif d == c then return j
      else j = j + 1 end
    end
    return #s
  end
  local eq = s:match("^%[(=*)%[", i)
  if eq then
    local _, e = s:find("]" .. eq .. "]", i, true)
    return e or #s
  end
  if s:sub(i, i + 1) == "--" then
    local leq = s:match("^%-%-%[(=*)%[", i)
    if leq then
      local _, e = s:find("]" .. leq .. "]", i, true)
      return e or #s
    end
    return (s:find("\n", i, true) or #s + 1) - 1
  end
  return nil
end

-- nginx's configuration as a tree: { name, args, children | lua }
local function parse(s, name)
  local i, stack = 1, { { children = {} } }
  local words = {}
  local function fail(what) error("fixtures.http_mock." .. name .. ": " .. what, 0) end
  while i <= #s do
    local c = s:sub(i, i)
    if c:match("%s") then i = i + 1
    elseif c == "#" then i = (s:find("\n", i, true) or #s) + 1
    elseif c == ";" then
      if #words == 0 then fail("an empty directive") end
      local list = stack[#stack].children
      list[#list + 1] = { name = words[1], args = { table.unpack(words, 2) } }
      words, i = {}, i + 1
    elseif c == "{" then
      if #words == 0 then fail("a block without a name") end
      local node = { name = words[1], args = { table.unpack(words, 2) } }
      local list = stack[#stack].children
      list[#list + 1] = node
      words, i = {}, i + 1
      if node.name:match("_by_lua_block$") then
        -- a Lua body: to its closing brace, Lua's strings and comments skipped whole
        local depth, j = 1, i
        while j <= #s and depth > 0 do
          local d = s:sub(j, j)
          local e = skip_lua(s, j)
          if e then j = e
          elseif d == "{" then depth = depth + 1
          elseif d == "}" then depth = depth - 1 end
          j = j + 1
        end
        if depth > 0 then fail("the " .. node.name .. " is not closed") end
        node.lua, i = s:sub(i, j - 2), j
      else
        node.children = {}
        stack[#stack + 1] = node
      end
    elseif c == "}" then
      if #stack == 1 or #words > 0 then fail("an unexpected '}'") end
      stack[#stack], i = nil, i + 1
    elseif c == '"' or c == "'" then
      local e = skip_lua(s, i)
      words[#words + 1], i = s:sub(i + 1, e - 1), e + 1
    else
      local word = s:match("^[^%s;{}]+", i)
      words[#words + 1], i = word, i + #word
    end
  end
  if #stack > 1 or #words > 0 then fail("a block or a directive is not closed") end
  return stack[1].children
end

local function location(node, name)
  local route = {}
  for _, d in ipairs(node.children or {}) do
    local phase = PHASES[d.name]
    if phase then route[phase] = d.lua
    elseif d.name == "return" or d.name == "default_type" then
      route.directives = route.directives or {}
      route.directives[#route.directives + 1] = d.name .. " " .. table.concat(d.args, " ")
    else
      error("fixtures.http_mock." .. name .. ": the directive '" .. d.name .. "' in a location is not emulated by "
        .. "broker (access_by_lua_block, content_by_lua_block, log_by_lua_block, default_type and return are)", 0)
    end
  end
  return table.concat(node.args, " "), route
end

--- The servers of fixture `name`'s `text`: a list of { port, routes }; raises naming what is not emulated.
function M.servers(name, text)
  local out = {}
  for _, node in ipairs(parse(render(text, name), name)) do
    if node.name ~= "server" or not node.children then
      error("fixtures.http_mock." .. name .. ": '" .. node.name .. "' at the top is not emulated by broker (server is)", 0)
    end
    local port, routes, default_type = nil, {}, nil
    for _, d in ipairs(node.children) do
      if d.name == "default_type" then
        default_type = "default_type " .. table.concat(d.args, " ")
      elseif d.name == "listen" then
        port = port or tonumber(tostring(d.args[1] or ""):match("(%d+)$"))
      elseif d.name == "location" and d.children then
        local key, route = location(d, name)
        routes[key] = route
      elseif not SERVER_IGNORED[d.name] then
        error("fixtures.http_mock." .. name .. ": the server directive '" .. d.name .. "' is not emulated by broker", 0)
      end
    end
    if not port then error("fixtures.http_mock." .. name .. ": a server without a listen port", 0) end
    -- the server's default_type is its locations' own, unless a location gives one (nginx's inheritance)
    for _, route in pairs(default_type and routes or {}) do
      route.directives = route.directives or {}
      table.insert(route.directives, 1, default_type)
    end
    out[#out + 1] = { port = port, routes = routes }
  end
  return out
end

return M
