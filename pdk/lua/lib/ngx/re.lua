-- ngx.re (match, find, gmatch, sub, gsub) and resty.core's ngx.re.split, on the host's
-- translation of PCRE to JS RegExp (which refuses what it cannot translate faithfully).
local H = __host
local type, tostring = type, tostring
local M = {}

-- nil when nothing matches; false, err for a pattern that does not compile (OpenResty's nil, err)
local function exec(subject, regex, options, init)
  local from, to, caps, names = H("re_exec", subject, regex, options, init)
  if from == false then return false, to end
  if not from then return nil end
  local m = {}
  for i = 1, #caps do m[i - 1] = caps[i] end
  if names then for k, v in pairs(names) do m[k] = v end end
  return from, to, m
end

function M.match(subject, regex, options, ctx, res)
  local init = ctx and ctx.pos or 1
  local from, to, m = exec(tostring(subject), regex, options, init)
  if not from then return nil, to end
  if ctx then ctx.pos = to + 1 end
  if res then for k, v in pairs(m) do res[k] = v end return res end
  return m
end

function M.find(subject, regex, options, ctx, nth)
  local init = ctx and ctx.pos or 1
  local from, to, m = exec(tostring(subject), regex, options, init)
  -- a pattern that does not compile: two nils, then the error (from, to, err), as lua-nginx-module documents
  if from == false then return nil, nil, to end
  if not from then return nil end
  if ctx then ctx.pos = to + 1 end
  if nth and nth > 0 then
    local cap = m[nth]
    if not cap then return nil end
    local s = tostring(subject)
    local at = s:find(cap, from, true)
    return at, at + #cap - 1
  end
  return from, to
end

function M.gmatch(subject, regex, options)
  subject = tostring(subject)
  local ok, err = H("re_compiles", regex, options)
  if not ok then return nil, err end
  local pos = 1
  return function()
    if pos > #subject + 1 then return nil end
    local from, to, m = exec(subject, regex, options, pos)
    if not from then pos = #subject + 2 return nil end
    pos = to >= from and to + 1 or to + 2
    return m
  end
end

-- "$0", "$1", "${name}" in a replacement template; "$$" is a dollar sign
local function expand(template, m)
  return (template:gsub("%$(%b{})", function(name) return tostring(m[tonumber(name:sub(2, -2)) or name:sub(2, -2)] or "") end)
    :gsub("%$(%$?)(%d?)", function(dollar, d)
      if dollar == "$" then return "$" .. d end
      if d == "" then return "$" end
      return tostring(m[tonumber(d)] or "")
    end))
end

local function replace(subject, regex, repl, options, global)
  subject = tostring(subject)
  local out, pos, n = {}, 1, 0
  while pos <= #subject + 1 do
    local from, to, m = exec(subject, regex, options, pos)
    if from == false then return nil, nil, to end
    if not from then break end
    out[#out + 1] = subject:sub(pos, from - 1)
    local r = type(repl) == "function" and repl(m) or expand(tostring(repl), m)
    out[#out + 1] = tostring(r)
    n = n + 1
    if to < from then
      out[#out + 1] = subject:sub(from, from)
      pos = from + 1
    else
      pos = to + 1
    end
    if not global then break end
  end
  out[#out + 1] = subject:sub(pos)
  return table.concat(out), n
end

function M.sub(subject, regex, repl, options) return replace(subject, regex, repl, options, false) end
function M.gsub(subject, regex, repl, options) return replace(subject, regex, repl, options, true) end

function M.split(subject, regex, options, ctx, max, res)
  subject = tostring(subject)
  res = res or {}
  local pos, n = 1, 0
  while true do
    if max and max > 0 and n >= max - 1 then break end
    local from, to = exec(subject, regex, options, pos)
    if from == false then return nil, to end
    if not from or from > #subject then break end
    if to < from then
      if from > #subject then break end
      from, to = from + 1, from
      res[#res + 1] = subject:sub(pos, from - 1)
      pos = from
    else
      res[#res + 1] = subject:sub(pos, from - 1)
      pos = to + 1
    end
    n = n + 1
  end
  res[#res + 1] = subject:sub(pos)
  return res
end

function M.opt() end

return M
