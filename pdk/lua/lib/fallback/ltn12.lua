-- ltn12 (LuaSocket's filters, sources and sinks), for socket.http (written for broker; LuaSocket's own
-- file on a Lua root wins). As under LuaJIT, requiring it also sets the global `ltn12`.
local M = { _VERSION = "LTN12 1.0.3", BLOCKSIZE = 2048, source = {}, sink = {}, pump = {}, filter = {} }

function M.source.empty() return function() return nil end end
function M.source.error(err) return function() return nil, err end end
function M.source.string(s)
  if not s then return M.source.empty() end
  local i = 1
  return function()
    local chunk = s:sub(i, i + M.BLOCKSIZE - 1)
    i = i + M.BLOCKSIZE
    if chunk ~= "" then return chunk end
    return nil
  end
end
function M.source.table(t)
  local i = 0
  return function() i = i + 1 return t[i] end
end

function M.sink.table(t)
  t = t or {}
  return function(chunk)
    if chunk then t[#t + 1] = chunk end
    return 1
  end, t
end
function M.sink.null() return function() return 1 end end
function M.sink.error(err) return function() return nil, err end end

function M.pump.step(src, snk)
  local chunk, src_err = src()
  local ret, snk_err = snk(chunk, src_err)
  if chunk and ret then return 1 end
  return nil, src_err or snk_err
end
function M.pump.all(src, snk, step)
  step = step or M.pump.step
  while true do
    local ret, err = step(src, snk)
    if not ret then
      if err then return nil, err end
      return 1
    end
  end
end

function M.filter.chain(...)
  local fs = { ... }
  return function(chunk)
    for _, f in ipairs(fs) do chunk = f(chunk) end
    return chunk
  end
end

ltn12 = M
return M
