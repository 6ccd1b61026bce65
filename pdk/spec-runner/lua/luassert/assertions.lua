-- The assertions luassert documents, written for broker: each a check on its arguments and a
-- message in our own words for when it holds where it should not (or fails where it should).
return function(L, register, util, say)
  local spy = require "luassert.spy"
  local fmt = util.format

  -- an assertion whose message is built from its arguments; `nargs` arguments before the
  -- optional message a spec may add
  local function define(names, nargs, check, positive, negative)
    for name in names:gmatch("%S+") do
      register(nil, "assertion", name, function(state, args)
        local custom = args[nargs + 1]
        if type(custom) == "string" then rawset(state, "failure_message", custom) end
        return check(args, state)
      end, function(args, state) return positive(args, state) end,
        function(args, state) return (negative or positive)(args, state, true) end)
    end
  end

  local function compared(verb)
    return function(args, state, negated)
      local _, path = util.deep_compare(args[1], args[2])
      if verb == "equal" then path = nil end
      return ("Expected objects %s %s.\nPassed in:\n%s\nExpected:\n%s"):format(
        negated and "not to be" or "to be", verb == "equal" and "equal" or "the same",
        fmt(args[2], path), (negated and "not " or "") .. fmt(args[1], path))
    end
  end

  define("same", 2, function(a) return (util.deep_compare(a[1], a[2])) end, compared("same"))
  define("equal equals", 2, function(a)
    if util.is_matcher(a[1]) then return a[1](a[2]) end
    return a[1] == a[2]
  end, compared("equal"))
  define("unique", 2, function(a)
    local list, deep = a[1], a[2]
    if type(list) ~= "table" then return false end
    local seen = {}
    for i, v in pairs(list) do
      for _, w in ipairs(seen) do
        if (deep and util.deep_compare(v, w)) or v == w then return false end
      end
      seen[#seen + 1] = v
    end
    return true
  end, function(a, _, neg) return ("Expected object %sto be unique:\n%s"):format(neg and "not " or "", fmt(a[1])) end)
  define("near", 3, function(a)
    local e, v, t = a[1], a[2], a[3]
    if type(e) ~= "number" or type(v) ~= "number" or type(t) ~= "number" then
      error("near: expected three numbers (expected, actual, tolerance)", 4)
    end
    return v >= e - t and v <= e + t
  end, function(a, _, neg)
    return ("Expected %s %sto be within %s of %s"):format(fmt(a[2]), neg and "not " or "", tostring(a[3]), tostring(a[1]))
  end)
  define("matches match", 4, function(a)
    local pattern, actual, init, plain = a[1], a[2], a[3], a[4]
    if type(actual) == "number" then actual = tostring(actual) end
    if type(actual) ~= "string" then return false end
    return actual:find(pattern, init, plain) ~= nil
  end, function(a, _, neg)
    return ("Expected the string %s %sto match the pattern:\n%s"):format(fmt(a[2]), neg and "not " or "", fmt(a[1]))
  end)

  define("truthy", 1, function(a) return a[1] ~= nil and a[1] ~= false end, function(a, _, neg)
    return ("Expected to be %s, but the value was:\n%s"):format(neg and "falsy" or "truthy", fmt(a[1]))
  end)
  define("falsy", 1, function(a) return a[1] == nil or a[1] == false end, function(a, _, neg)
    return ("Expected to be %s, but the value was:\n%s"):format(neg and "truthy" or "falsy", fmt(a[1]))
  end)
  define("true", 1, function(a) return a[1] == true end, function(a, _, neg)
    return ("Expected the value %sto be true:\n%s"):format(neg and "not " or "", fmt(a[1]))
  end)
  define("false", 1, function(a) return a[1] == false end, function(a, _, neg)
    return ("Expected the value %sto be false:\n%s"):format(neg and "not " or "", fmt(a[1]))
  end)
  for _, t in ipairs({ "nil", "boolean", "number", "string", "table", "function", "userdata", "thread" }) do
    define(t, 1, function(a) return type(a[1]) == t end, function(a, _, neg)
      return ("Expected a value %sof type %s, got:\n%s"):format(neg and "not " or "", t, fmt(a[1]))
    end)
  end
  define("property has_property", 2, function(a) return type(a[2]) == "table" and a[2][a[1]] ~= nil end, function(a, _, neg)
    return ("Expected the table %sto have the property %s:\n%s"):format(neg and "not " or "", fmt(a[1]), fmt(a[2]))
  end)
  define("returned_arguments", 0, function(a) return a[1] == (a.n - 1) end, function(a, _, neg)
    return ("Expected %s%s values after the count, got %d"):format(neg and "not " or "", tostring(a[1]), a.n - 1)
  end)

  -- errors: the function is called; a string error loses its "file:line: " position before comparing
  local function strip(e) return type(e) == "string" and (e:gsub("^.-:%d+: ", "", 1)) or e end
  local function call(f)
    if type(f) ~= "function" and not (getmetatable(f) or {}).__call then
      error("has_error: expected a function to call, got " .. type(f), 5)
    end
    local ok, err = pcall(f)
    if not ok and L.is_assertion_error(err) then err = err.plain end
    return ok, err
  end
  define("error errors has_error has_errors", 2, function(a, state)
    local ok, err = call(a[1])
    rawset(state, "error_seen", { ok = ok, err = err })
    if ok then return false end
    if a.n < 2 or a[2] == nil then return true end
    if type(a[2]) == "string" then return strip(err) == a[2] or err == a[2] end
    return (util.deep_compare(a[2], err))
  end, function(a, state, neg)
    local seen = rawget(state, "error_seen") or {}
    if neg then return "Expected no error, but the function raised:\n" .. fmt(seen.err) end
    if seen.ok then return "Expected an error" .. (a[2] ~= nil and (" " .. fmt(a[2])) or "") .. ", but none was raised" end
    return ("Expected the error:\n%s\nCaught:\n%s"):format(fmt(a[2]), fmt(seen.err))
  end)
  -- error_matches(fn, pattern, init, plain): the error text, position included, matches the pattern
  define("error_matches error_match matches_error match_error", 4, function(a, state)
    local ok, err = call(a[1])
    rawset(state, "error_seen", { ok = ok, err = err })
    if ok or type(err) ~= "string" then return false end
    return err:find(a[2], a[3], a[4]) ~= nil
  end, function(a, state, neg)
    local seen = rawget(state, "error_seen") or {}
    if seen.ok then return "Expected an error matching " .. fmt(a[2]) .. ", but none was raised" end
    return ("Expected the error %sto match the pattern:\n%s\nCaught:\n%s"):format(neg and "not " or "", fmt(a[2]), fmt(seen.err))
  end)

  -- spies: assert.spy(s).was.called(n), called_with(...), returned_with(...)
  local function target(state, args)
    local s = rawget(state, "payload")
    if s then return s, 0 end
    return args[1], 1
  end
  local function check_spy(s)
    if not spy.is_spy(s) then error("expected a spy or a stub (assert.spy(s) / assert.stub(s)), got " .. type(s), 5) end
    return s
  end
  for _, kind in ipairs({ "spy", "stub" }) do
    register(nil, "modifier", kind, function(state, args) rawset(state, "payload", check_spy(args[1])) end)
  end
  local function count_check(name, cmp, words)
    register(nil, "assertion", name, function(state, args)
      local s, skip = target(state, args)
      check_spy(s)
      local n = args[skip + 1]
      rawset(state, "calls_seen", #s.calls)
      if n == nil and name == "called" then return #s.calls > 0 end
      return cmp(#s.calls, n)
    end, function(args, state)
      local _, skip = target(state, args)
      return ("Expected the spy to be called %s%s time(s), but it was called %d time(s)"):format(
        words, tostring(args[skip + 1] or "at least 1"), rawget(state, "calls_seen") or 0)
    end, function(args, state)
      local _, skip = target(state, args)
      return ("Expected the spy not to be called %s%s time(s), but it was called %d time(s)"):format(
        words, tostring(args[skip + 1] or "at least 1"), rawget(state, "calls_seen") or 0)
    end)
  end
  count_check("called", function(a, b) return a == b end, "")
  count_check("called_at_least", function(a, b) return a >= b end, "at least ")
  count_check("called_at_most", function(a, b) return a <= b end, "at most ")
  count_check("called_more_than", function(a, b) return a > b end, "more than ")
  count_check("called_less_than", function(a, b) return a < b end, "less than ")

  local function calls_text(s, field)
    local lines = {}
    for i, c in ipairs(s.calls) do
      local vals = {}
      local list = c[field] or { n = 0 }
      for j = 1, list.n or #list do vals[j] = fmt(list[j]) end
      lines[i] = ("  call %d: (%s)"):format(i, table.concat(vals, ", "))
    end
    return #lines > 0 and table.concat(lines, "\n") or "  (never called)"
  end
  local function with_check(name, method, field, words)
    register(nil, "assertion", name, function(state, args)
      local s, skip = target(state, args)
      check_spy(s)
      local want = { n = args.n - skip }
      for i = 1, want.n do want[i] = args[i + skip] end
      rawset(state, "want", want)
      return s[method](s, table.unpack(want, 1, want.n))
    end, function(args, state, neg)
      local s = target(state, args)
      local want, vals = rawget(state, "want") or { n = 0 }, {}
      for j = 1, want.n do vals[j] = fmt(want[j]) end
      return ("Expected the spy %sto be %s (%s); its calls:\n%s"):format(neg and "not " or "", words,
        table.concat(vals, ", "), calls_text(s, field))
    end, function(args, state)
      local s = target(state, args)
      local want, vals = rawget(state, "want") or { n = 0 }, {}
      for j = 1, want.n do vals[j] = fmt(want[j]) end
      return ("Expected the spy not to be %s (%s); its calls:\n%s"):format(words, table.concat(vals, ", "),
        calls_text(s, field))
    end)
  end
  with_check("called_with", "called_with", "vals", "called with")
  with_check("returned_with", "returned_with", "returnvals", "returning")
  _ = say
end
