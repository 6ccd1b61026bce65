-- busted's spec API and runner, written for broker from busted's documentation: blocks
-- (describe/context/insulate/expose) run their bodies when they are reached and then their
-- children in order; tests (it/spec/test) run between their blocks' before_each and after_each;
-- lazy setups run before a block's first selected test, strict ones when the block starts.
-- The run is a coroutine: what needs the host (a proxied request) yields to it.
local L = require "luassert"
local M = {}

local HOOKS = { "strict_setup", "lazy_setup", "strict_teardown", "lazy_teardown", "before_each", "after_each" }
local results, options, current, running_test = {}, {}, nil, nil
local clock = os.clock

local function new_block(kind, name, fn, parent, info)
  local b = { kind = kind, name = name, fn = fn, parent = parent, children = {}, hooks = {},
    file = info and info.short_src, line = info and info.currentline }
  for _, h in ipairs(HOOKS) do b.hooks[h] = {} end
  return b
end

local function full_name(node)
  local parts = {}
  while node do
    if node.name and node.name ~= "" then table.insert(parts, 1, node.name) end
    node = node.parent
  end
  return table.concat(parts, " ")
end
M.full_name = full_name
--- The full name of the test running now (nil in a hook outside a test).
function M.running() return running_test and full_name(running_test) or nil end

local function tags_of(name)
  local tags = {}
  for t in name:gmatch("#([%w_%-]+)") do tags[#tags + 1] = t end
  return tags
end

local function any_in(list, set)
  for _, v in ipairs(list) do if set[v] then return true end end
  return false
end

local function selected(test)
  local name = full_name(test)
  local tags = tags_of(name)
  if options.exclude_tags and any_in(tags, options.exclude_tags) then return false end
  if options.tags and next(options.tags) and not any_in(tags, options.tags) then return false end
  for _, p in ipairs(options.filter_out or {}) do if name:find(p) then return false end end
  if options.filter and #options.filter > 0 then
    for _, p in ipairs(options.filter) do if name:find(p) then return true end end
    return false
  end
  return true
end

-- the first frame of the spec's own code (not broker's Lua) in a traceback's levels
local function spec_frame(level)
  for l = level, 60 do
    local info = debug.getinfo(l, "Sl")
    if not info then return nil end
    if info.what ~= "C" and not info.source:find("^@broker[:/]") then return info end
  end
end

--- Calls fn; nil when it returned, else { status = "failure"|"error", message, trace }.
local function safe(fn, ...)
  local caught
  local ok = xpcall(fn, function(e)
    local failure = L.is_assertion_error(e)
    local info = failure and e.trace or spec_frame(2)
    local message = failure and e.message or (type(e) == "string" and e) or
      (type(e) == "table" and (e.message or e.msg) and tostring(e.message or e.msg)) or tostring(e)
    caught = {
      status = failure and "failure" or "error",
      message = message,
      trace = {
        short_src = info and info.short_src or "?",
        currentline = info and info.currentline or 0,
        traceback = failure and e.trace and e.trace.traceback or debug.traceback("", 2),
      },
    }
    return e
  end, ...)
  if ok then return nil end
  return caught
end

local function report(status, node, extra)
  local entry = {
    status = status, name = full_name(node) ~= "" and full_name(node) or node.file, file = node.file, line = node.line,
    descriptor = extra and extra.descriptor or node.kind,
    message = extra and extra.message, trace = extra and extra.trace, duration = extra and extra.duration or 0,
  }
  results[#results + 1] = entry
  return entry
end

local function run_hooks(block, kind)
  for _, h in ipairs(block.hooks[kind]) do
    local failed = safe(h.fn)
    if failed then return failed end
  end
end

local function ancestors(node)
  local list = {}
  local b = node.parent
  while b do table.insert(list, 1, b) b = b.parent end
  return list
end

-- a block whose setup failed reports it once, and none of its tests run
local function setup_failed(block, kind, failed)
  block.failed = true
  report(failed.status, block, { descriptor = kind, message = failed.message, trace = failed.trace })
end

local function run_test(test)
  if not selected(test) then return end
  if test.kind == "pending" then
    report("pending", test, { message = test.reason, trace = { short_src = test.file, currentline = test.line } })
    return
  end
  local chain = ancestors(test)
  for _, b in ipairs(chain) do if b.failed then return end end
  for _, b in ipairs(chain) do
    if not b.lazy_done then
      b.lazy_done = true
      local failed = run_hooks(b, "lazy_setup")
      if failed then setup_failed(b, "lazy_setup", failed) return end
    end
  end
  coroutine.yield("tick")
  local started = clock()
  local snap = L.assert:snapshot()
  local failed
  for _, b in ipairs(chain) do
    failed = run_hooks(b, "before_each")
    if failed then failed.descriptor = "before_each" break end
  end
  if not failed then
    test.finally = nil
    running_test = test
    failed = safe(test.fn)
    running_test = nil
    if test.finally then
      local f = safe(test.finally)
      if f and not failed then failed = f end
    end
  end
  for i = #chain, 1, -1 do
    local f = run_hooks(chain[i], "after_each")
    if f and not failed then failed, f.descriptor = f, "after_each" end
  end
  snap.revert()
  local took = clock() - started
  if failed then
    report(failed.status, test, { message = failed.message, trace = failed.trace, duration = took,
      descriptor = failed.descriptor })
  else
    report("success", test, { duration = took, trace = { short_src = test.file, currentline = test.line } })
  end
end

local function snapshot_globals()
  local g, loaded = {}, {}
  for k, v in pairs(_G) do g[k] = v end
  for k, v in pairs(package.loaded) do loaded[k] = v end
  return function()
    for k in pairs(_G) do if g[k] == nil then _G[k] = nil end end
    for k, v in pairs(g) do _G[k] = v end
    for k in pairs(package.loaded) do if loaded[k] == nil then package.loaded[k] = nil end end
    for k, v in pairs(loaded) do package.loaded[k] = v end
  end
end

local run_block

local function run_children(block)
  for _, child in ipairs(block.children) do
    if block.failed then break end
    if child.children then run_block(child) else run_test(child) end
  end
end

run_block = function(block)
  local restore = block.kind == "insulate" and snapshot_globals()
  local snap = L.assert:snapshot()
  if block.fn then
    local outer = current
    current = block
    local failed = safe(block.fn)
    current = outer
    if failed then
      report(failed.status, block, { descriptor = block.kind, message = failed.message, trace = failed.trace })
      snap.revert()
      if restore then restore() end
      return
    end
  end
  local failed = run_hooks(block, "strict_setup")
  if failed then setup_failed(block, "strict_setup", failed) else run_children(block) end
  if block.lazy_done then
    local f = run_hooks(block, "lazy_teardown")
    if f then report(f.status, block, { descriptor = "lazy_teardown", message = f.message, trace = f.trace }) end
  end
  local f = run_hooks(block, "strict_teardown")
  if f then report(f.status, block, { descriptor = "strict_teardown", message = f.message, trace = f.trace }) end
  snap.revert()
  if restore then restore() end
end

-- the spec API: what a spec file sees as globals
local function where() return debug.getinfo(3, "Sl") end

local function add_block(kind)
  return function(name, fn)
    if running_test then error(kind .. "() cannot be called inside a test", 2) end
    if type(name) == "function" then name, fn = "", name end
    local b = new_block(kind, tostring(name), fn, current, where())
    current.children[#current.children + 1] = b
  end
end

local function add_test(name, fn)
  if running_test then error("it() cannot be called inside a test", 2) end
  local info = where()
  local t = { kind = fn and "it" or "pending", name = tostring(name), fn = fn, parent = current,
    file = info.short_src, line = info.currentline }
  current.children[#current.children + 1] = t
end

local function add_hook(kind)
  local function add(fn)
    if running_test then error(kind .. "() cannot be called inside a test", 2) end
    -- busted registers nothing for a hook given nil and hands back a function that registers the one it is
    -- given (Kong's http-log schema spec passes after_each a local that a before_each sets later)
    if fn == nil then return add end
    if type(fn) ~= "function" then error(kind .. "() expects a function", 2) end
    local list = current.hooks[kind]
    list[#list + 1] = { fn = fn }
  end
  return add
end

--- The globals a spec file runs with.
function M.api(lazy)
  local api = {
    describe = add_block("describe"), context = add_block("describe"),
    insulate = add_block("insulate"), expose = add_block("expose"),
    it = add_test, spec = add_test, test = add_test,
    pending = function(name, fn)
      if running_test then error("pending() cannot be called inside a test", 2) end
      local info = where()
      current.children[#current.children + 1] = { kind = "pending", name = tostring(name), parent = current,
        file = info.short_src, line = info.currentline, reason = type(fn) == "string" and fn or nil }
    end,
    lazy_setup = add_hook("lazy_setup"), lazy_teardown = add_hook("lazy_teardown"),
    strict_setup = add_hook("strict_setup"), strict_teardown = add_hook("strict_teardown"),
    before_each = add_hook("before_each"), after_each = add_hook("after_each"),
    finally = function(fn)
      if not running_test then error("finally() can only be called inside a test", 2) end
      running_test.finally = fn
    end,
    randomize = function() end,
  }
  -- busted's setup/teardown are its strict ones, unless --lazy makes them the lazy ones
  api.setup = lazy and api.lazy_setup or api.strict_setup
  api.teardown = lazy and api.lazy_teardown or api.strict_teardown
  return api
end

--- Runs one spec file's chunk as a block of its own; the results of its tests.
function M.run_file(chunk, chunkname, opts)
  options, results = opts or {}, {}
  local file = new_block("file", "", chunk, nil, { short_src = chunkname:gsub("^@", ""), currentline = 0 })
  current = file
  run_block(file)
  return results
end

return M
