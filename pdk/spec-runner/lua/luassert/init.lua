-- luassert's `assert`, written for broker from luassert's documented behaviour: a chain of
-- modifiers (is, are, has, not, no …) ending in an assertion, all looked up in one registry that
-- `assert:register` extends; a failure raises an assertion error that busted reports as a failure.
local util = require "luassert.util"
local say = require "say"

local registry = { assertion = {}, modifier = {} }
local parameters = { TableFormatLevel = 3, TableErrorHighlightMark = "*" }
local snapshots = {}

local ASSERTION_ERROR = { __name = "assertion error" }
ASSERTION_ERROR.__tostring = function(e) return e.message end

local M = {}

--- Whether a value is an assertion error (a failure, not an error, to busted).
function M.is_assertion_error(e) return getmetatable(e) == ASSERTION_ERROR end

-- the line of the spec that asserted: the first frame outside broker's own Lua
local function caller(level)
  for l = level or 3, 40 do
    local info = debug.getinfo(l, "Sl")
    if not info then break end
    if info.what ~= "C" and not info.source:find("^@broker:") then return info end
  end
  return debug.getinfo(3, "Sl")
end

--- Raises an assertion error whose message starts with the spec's file:line.
function M.fail(message, level)
  local info = caller(level)
  local where = info and (info.short_src .. ":" .. (info.currentline or 0) .. ": ") or ""
  error(setmetatable({ message = where .. message, plain = message, trace = info and {
    short_src = info.short_src, currentline = info.currentline, traceback = debug.traceback("", 2),
  } }, ASSERTION_ERROR), 0)
end

local function register(_, kind, name, callback, positive, negative)
  if kind ~= "assertion" and kind ~= "modifier" and kind ~= "matcher" then
    error("assert:register: kind must be 'assertion', 'modifier' or 'matcher', got " .. tostring(kind), 2)
  end
  if kind == "matcher" then return require("luassert.match")._register(name, callback) end
  registry[kind][name:lower()] = { name = name, callback = callback, positive = positive, negative = negative }
end

-- tokens of a key: the longest registered names first ("has_no_errors" → has, no, errors)
local function tokens(key)
  local parts = {}
  for p in key:lower():gmatch("[^_]+") do parts[#parts + 1] = p end
  local out, i = {}, 1
  while i <= #parts do
    local found
    for j = #parts, i, -1 do
      local name = table.concat(parts, "_", i, j)
      if registry.assertion[name] or registry.modifier[name] then found = j out[#out + 1] = name break end
    end
    if not found then return nil, parts[i] end
    i = found + 1
  end
  return out
end

local state_mt = {}
local extend, flip

-- a state carries what modifiers stored on it (the spy, Kong's response) down the chain
local function new_state(parent)
  local s = { mod = true }
  if parent then for k, v in next, parent do s[k] = v end end
  s.tokens = {}
  return setmetatable(s, state_mt)
end

local function message_of(a, state, args)
  local custom = rawget(state, "failure_message")
  if custom then return custom end
  local key = rawget(state, "mod") and a.positive or a.negative
  if type(key) == "function" then return key(args, state) end
  if key and say(key) then
    local formatted = {}
    for i = 1, args.n or #args do
      formatted[i] = (args.nofmt and args.nofmt[i]) and tostring(args[i]) or util.format(args[i])
    end
    return say(key, formatted)
  end
  return (key or a.name) .. " failed"
end

state_mt.__call = function(self, ...)
  local last = self.tokens[#self.tokens]
  local a = last and registry.assertion[last]
  local args = util.args(...)
  if not a then
    local m = last and registry.modifier[last]
    if m and m.callback then
      m.callback(self, args, 2)
      return self
    end
    error("luassert: '" .. table.concat(self.tokens, ".") .. "' names no assertion", 2)
  end
  local ok, ret = a.callback(self, args, 2)
  if (not not ok) ~= rawget(self, "mod") then
    M.fail(message_of(a, self, args), 3)
  end
  if ret then return table.unpack(ret, 1, ret.n or #ret) end
  return ...
end

local assert_mt = {}
local methods = {
  register = register,
  set_parameter = function(_, name, value) parameters[name] = value end,
  get_parameter = function(_, name) return parameters[name] end,
  add_formatter = function() end,
  remove_formatter = function() end,
  format = function(_, args)
    local out = { n = args.n }
    for i = 1, args.n or #args do out[i] = util.format(args[i]) end
    return out
  end,
  --- Spies and stubs made after this are reverted by the snapshot's revert().
  snapshot = function()
    local snap = { spies = {} }
    snapshots[#snapshots + 1] = snap
    function snap.revert()
      for i = #snap.spies, 1, -1 do pcall(snap.spies[i].revert, snap.spies[i]) end
      snap.spies = {}
      for i = #snapshots, 1, -1 do if snapshots[i] == snap then table.remove(snapshots, i) end end
    end
    return snap
  end,
}
assert_mt.__index = function(_, key)
  if methods[key] then return methods[key] end
  return extend(new_state(), key, 2)
end
assert_mt.__call = function(_, v, message, ...)
  if not v then M.fail(message ~= nil and tostring(message) or "assertion failed!", 3) end
  return v, message, ...
end

local assert = setmetatable({}, assert_mt)
M.assert = assert
M.registry = registry

--- A spy made: kept in the innermost snapshot, so the test (or block) that made it reverts it.
function M.track(spy)
  local snap = snapshots[#snapshots]
  if snap then snap.spies[#snap.spies + 1] = spy end
end

-- words that only read well, and the two that flip the assertion (not, no)
for _, m in ipairs({ "is", "are", "was", "has", "does", "to", "be", "been", "have", "the", "at", "not", "no" }) do
  registry.modifier[m] = { name = m }
end
flip = { ["not"] = true, no = true }

-- the state one key further down the chain; `level` points an unknown name at the spec's line
function extend(self, key, level)
  if type(key) ~= "string" then return nil end
  local list, bad = tokens(key)
  if not list then
    error("luassert: unknown modifier or assertion: '" .. tostring(bad) .. "' (in '" .. key .. "')", level)
  end
  local s = new_state(self)
  for i, t in ipairs(self.tokens) do s.tokens[i] = t end
  for _, t in ipairs(list) do
    s.tokens[#s.tokens + 1] = t
    if flip[t] then s.mod = not s.mod end
  end
  return s
end
state_mt.__index = function(self, key) return extend(self, key, 2) end -- a tail call: level 2 is the spec

require("luassert.assertions")(M, register, util, say)
return M
