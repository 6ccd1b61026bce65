-- kong.db.connector of spec.helpers' Postgres (written for broker): the statements Kong's bundled
-- plugins send through connector:query (the rate-limiting and response-ratelimiting cluster policies'
-- counters), run on the same in-memory rows as kong.db. What it runs: BEGIN/COMMIT, INSERT … VALUES …
-- [ON CONFLICT (…) DO UPDATE SET "c" = "t"."c" + EXCLUDED."c" | DO NOTHING], SELECT … FROM … WHERE "c" = v
-- [AND …], UPDATE … SET "c" = v [, …] [WHERE …], TRUNCATE and DROP TABLE; literals, ARRAY[…], casts (v::jsonb decoded), TO_TIMESTAMP(s) AT TIME ZONE 'UTC' (seconds), and
-- CURRENT_TIMESTAMP + INTERVAL 'n second' (a ttl column becomes the row's ttl). Any other statement
-- answers nil and an error naming it, so the plugin's error path runs and the spec sees why.
local rows = require "broker.spec.db"
local store = require "broker.db"
local null = ngx.null
local cjson = require "cjson.safe"
local M = {}

-- tokens: { kind, value }; kinds: id (a "quoted" or bare name), str, num, sym
local function tokenize(sql)
  local out, i, n = {}, 1, #sql
  while i <= n do
    local c = sql:sub(i, i)
    if c:match("%s") then
      i = i + 1
    elseif c == "'" or ((c == "E" or c == "e") and sql:sub(i + 1, i + 1) == "'") then
      if c ~= "'" then i = i + 1 end
      local buf, j = {}, i + 1
      while true do
        local q = sql:find("'", j, true)
        if not q then return nil, "unterminated string literal" end
        buf[#buf + 1] = sql:sub(j, q - 1)
        if sql:sub(q + 1, q + 1) == "'" then
          buf[#buf + 1] = "'"
          j = q + 2
        else
          i = q + 1
          break
        end
      end
      out[#out + 1] = { "str", table.concat(buf) }
    elseif c == '"' then
      local q = sql:find('"', i + 1, true)
      if not q then return nil, "unterminated identifier" end
      out[#out + 1] = { "id", sql:sub(i + 1, q - 1) }
      i = q + 1
    elseif c:match("[%d]") or (c == "-" and sql:sub(i + 1, i + 1):match("%d")) then
      local num = sql:match("^%-?%d+%.?%d*", i)
      out[#out + 1] = { "num", tonumber(num) }
      i = i + #num
    elseif c:match("[%a_]") then
      local word = sql:match("^[%w_]+", i)
      out[#out + 1] = { "id", word, upper = word:upper() }
      i = i + #word
    else
      out[#out + 1] = { "sym", c }
      i = i + 1
    end
  end
  return out
end

-- a statement's tokens with a cursor
local Parser = {}
Parser.__index = Parser

function Parser:peek(k) return self.t[self.i + (k or 0)] end
function Parser:word(w)
  local t = self.t[self.i]
  if t and t[1] == "id" and t.upper == w then
    self.i = self.i + 1
    return true
  end
end
function Parser:sym(s)
  local t = self.t[self.i]
  if t and t[1] == "sym" and t[2] == s then
    self.i = self.i + 1
    return true
  end
end
function Parser:expect_word(w) if not self:word(w) then error({ sql = "expected " .. w }) end end
function Parser:expect_sym(s) if not self:sym(s) then error({ sql = "expected '" .. s .. "'" }) end end
function Parser:name()
  local t = self.t[self.i]
  if not t or t[1] ~= "id" then error({ sql = "expected a name" }) end
  self.i = self.i + 1
  return t[2]
end
function Parser:names()
  self:expect_sym("(")
  local list = {}
  repeat list[#list + 1] = self:name() until not self:sym(",")
  self:expect_sym(")")
  return list
end

-- a whole number stays an integer (Kong's integer columns)
local function number(v) return math.tointeger(v) or v end

-- a value, with a Postgres cast after it (v::type): json and jsonb text becomes the table Kong's
-- columns of that type hold (what pgmoon hands back); another type keeps the value as written
function Parser:value()
  local v = self:plain_value()
  while self:peek() and self:peek()[2] == ":" and self:peek(1) and self:peek(1)[2] == ":" do
    self.i = self.i + 2
    local kind = self:name():lower()
    if (kind == "jsonb" or kind == "json") and type(v.value) == "string" then
      local decoded = cjson.decode(v.value)
      if decoded == nil then error({ sql = "invalid input syntax for type " .. kind }) end
      v = { value = decoded }
    end
  end
  return v
end

-- a value: { value } or { interval = seconds } for CURRENT_TIMESTAMP + INTERVAL
function Parser:plain_value()
  local t = self:peek()
  if not t then error({ sql = "expected a value" }) end
  if t[1] == "str" then self.i = self.i + 1 return { value = t[2] } end
  if t[1] == "num" then self.i = self.i + 1 return { value = number(t[2]) } end
  if self:word("NULL") then return { value = null } end
  if self:word("TRUE") then return { value = true } end
  if self:word("ARRAY") then
    -- ARRAY['a', 'b']: a text[] column's value, as pgmoon hands it back (a Lua array)
    self:expect_sym("[")
    local list = setmetatable({}, __broker_array_mt)
    if not self:sym("]") then
      repeat list[#list + 1] = self:value().value until not self:sym(",")
      self:expect_sym("]")
    end
    return { value = list }
  end
  if self:word("FALSE") then return { value = false } end
  if self:word("TO_TIMESTAMP") then
    self:expect_sym("(")
    local v = self:value()
    self:expect_sym(")")
    if self:word("AT") then self:expect_word("TIME") self:expect_word("ZONE") self:value() end
    return { value = number(tonumber(v.value)) }
  end
  if self:word("CURRENT_TIMESTAMP") then
    if self:word("AT") then self:expect_word("TIME") self:expect_word("ZONE") self:value() end
    local seconds = 0
    if self:sym("+") then
      self:expect_word("INTERVAL")
      local text = self:value().value
      seconds = tonumber(tostring(text):match("^%s*(%-?[%d.]+)%s*seconds?%s*$"))
      if not seconds then error({ sql = "an INTERVAL other than 'n second': " .. tostring(text) }) end
    end
    return { interval = seconds }
  end
  error({ sql = "an expression broker does not evaluate (" .. tostring(t[2]) .. ")" })
end

-- [WHERE "c" = v [AND …]]: the columns' values a row must have (none: every row)
function Parser:where()
  local where = {}
  if self:word("WHERE") then
    repeat
      local column = self:name()
      self:expect_sym("=")
      where[column] = self:value().value
    until not self:word("AND")
  end
  return where
end

-- a SET term: a column of the row ("t"."c"), of the proposed row (EXCLUDED."c") or a value
function Parser:term(table_name)
  local t, dot = self:peek(), self:peek(1)
  if t and t[1] == "id" and dot and dot[1] == "sym" and dot[2] == "." then
    self.i = self.i + 2
    local column = self:name()
    if t.upper == "EXCLUDED" then return { excluded = column } end
    if t[2] ~= table_name then error({ sql = "a column of another table: " .. t[2] }) end
    return { column = column }
  end
  return self:value()
end

local function relation_error(name)
  return '[postgres] ERROR: relation "' .. name .. '" does not exist'
end

local function exists(name)
  if store.dropped[name] then return nil, relation_error(name) end
  return true
end

local function matches(row, where)
  for column, v in pairs(where) do
    if row[column] ~= v then return false end
  end
  return true
end

local function insert(p)
  p:expect_word("INTO")
  local name = p:name()
  local columns = p:names()
  p:expect_word("VALUES")
  p:expect_sym("(")
  local values = {}
  repeat values[#values + 1] = p:value() until not p:sym(",")
  p:expect_sym(")")
  if #values ~= #columns then error({ sql = "INSERT has more target columns than expressions" }) end
  local conflict, sets, nothing
  if p:word("ON") then
    p:expect_word("CONFLICT")
    if p:peek() and p:peek()[2] == "(" then conflict = p:names() end
    p:expect_word("DO")
    if p:word("NOTHING") then
      nothing = true
    else
      p:expect_word("UPDATE")
      p:expect_word("SET")
      sets = {}
      repeat
        local column = p:name()
        p:expect_sym("=")
        local terms = { p:term(name) }
        while p:sym("+") do terms[#terms + 1] = p:term(name) end
        sets[#sets + 1] = { column = column, terms = terms }
      until not p:sym(",")
    end
  end
  local ok, err = exists(name)
  if not ok then return nil, err end
  local row = {}
  for i, column in ipairs(columns) do
    local v = values[i]
    if v.interval then
      -- Kong's ttl column: the row is gone once the seconds have passed on the spec's clock
      if column == "ttl" then row.ttl = v.interval else row[column] = ngx.time() + v.interval end
    else
      row[column] = v.value
    end
  end
  if conflict then
    local key = {}
    for _, c in ipairs(conflict) do key[c] = row[c] end
    for _, existing in ipairs(rows.rows(name)) do
      if matches(existing, key) then
        if nothing then return { affected_rows = 0 } end
        for _, s in ipairs(sets) do
          local sum
          for _, t in ipairs(s.terms) do
            local v = t.column and existing[t.column] or t.excluded and row[t.excluded] or t.value
            if type(v) ~= "number" then
              sum = v
            else
              sum = (sum or 0) + v
            end
          end
          existing[s.column] = sum
        end
        store.reset()
        return { affected_rows = 1 }
      end
    end
  end
  -- as SQL does: no entity schema in between (Postgres takes the nil UUID Kong's schema refuses); the
  -- columns' defaults fill only what the statement leaves out
  if row.id == nil then row.id = require("kong.tools.uuid").uuid() end
  if row.created_at == nil then row.created_at = ngx.time() end
  local list = rows.rows(name)
  list[#list + 1] = row
  store.reset()
  return { affected_rows = 1 }
end

-- UPDATE t SET "c" = v [, …] [WHERE "c" = v [AND …]]: the rows the WHERE names take the values. A foreign key's
-- column (route_id) sets the entity's reference (route = { id = … }), as kong.db holds it.
local function update(p)
  local name = p:name()
  p:expect_word("SET")
  local sets = {}
  repeat
    local column = p:name()
    p:expect_sym("=")
    sets[#sets + 1] = { column = column, value = p:value().value }
  until not p:sym(",")
  local where = p:where()
  local ok, err = exists(name)
  if not ok then return nil, err end
  local foreign = require("broker.spec.entities").info(name).foreign or {}
  local affected = 0
  for _, row in ipairs(rows.rows(name)) do
    if matches(row, where) then
      for _, s in ipairs(sets) do
        local field = s.column:match("^(.-)_id$")
        if field and foreign[field] then
          row[field] = s.value == null and null or { id = s.value }
        else
          row[s.column] = s.value
        end
      end
      affected = affected + 1
    end
  end
  if affected > 0 then store.reset() end
  return { affected_rows = affected }
end

local function select(p)
  local columns = {}
  if not p:sym("*") then
    repeat columns[#columns + 1] = p:name() until not p:sym(",")
  end
  p:expect_word("FROM")
  local name = p:name()
  local where = p:where()
  local ok, err = exists(name)
  if not ok then return nil, err end
  local out = {}
  -- kong.db's view of the rows: a row whose ttl has passed is gone
  for r in store.db[name]:each() do
    if matches(r, where) then
      local picked = {}
      if #columns == 0 then
        for k, v in pairs(r) do picked[k] = v end
      else
        for _, c in ipairs(columns) do picked[c] = r[c] end
      end
      out[#out + 1] = picked
    end
  end
  return out
end

local function statement(sql)
  local tokens, terr = tokenize(sql)
  if not tokens then return nil, terr end
  if #tokens == 0 then return {} end
  local p = setmetatable({ t = tokens, i = 1 }, Parser)
  local res, err
  if p:word("BEGIN") or p:word("COMMIT") or p:word("ROLLBACK") then
    res = {}
  elseif p:word("INSERT") then
    res, err = insert(p)
  elseif p:word("SELECT") then
    res, err = select(p)
  elseif p:word("UPDATE") then
    res, err = update(p)
  elseif p:word("TRUNCATE") then
    p:word("TABLE")
    local name = p:name()
    res, err = exists(name)
    if res then rows.truncate(name) res = {} end
  elseif p:word("DROP") then
    p:expect_word("TABLE")
    local if_exists = p:word("IF") and p:word("EXISTS")
    local name = p:name()
    if store.dropped[name] and not if_exists then return nil, relation_error(name) end
    rows.truncate(name)
    store.dropped[name] = true
    res = {}
  else
    return nil, "broker's in-memory Postgres does not run this statement (docs/pdk-test.md): " .. sql:sub(1, 80)
  end
  if res and p:peek() then
    return nil, "broker's in-memory Postgres does not read past '" .. tostring(p:peek()[2]) .. "' in: " .. sql:sub(1, 80)
  end
  return res, err
end

-- the statements of one query, split on the semicolons outside quotes
local function statements(sql)
  local list, start, quote = {}, 1, nil
  for i = 1, #sql do
    local c = sql:sub(i, i)
    if quote then
      if c == quote then quote = nil end
    elseif c == "'" or c == '"' then
      quote = c
    elseif c == ";" then
      list[#list + 1] = sql:sub(start, i - 1)
      start = i + 1
    end
  end
  list[#list + 1] = sql:sub(start)
  return list
end

M.connector = {
  database = "kong_tests",
  timeout = 5000,
  connect = function() return true end,
  close = function() return true end,
  setkeepalive = function() return true end,
  infos = function() return { strategy = "PostgreSQL", db_name = "kong_tests", db_desc = "database", db_ver = "13" } end,
}

--- Kong's Postgres quoting: strings in single quotes, numbers and booleans as they are, null as NULL.
function M.connector:escape_literal(v)
  if v == nil or v == null then return "NULL" end
  if type(v) == "number" or type(v) == "boolean" then return tostring(v):upper() end
  return "'" .. tostring(v):gsub("'", "''") .. "'"
end

--- Kong's connector:query(sql): the last statement's rows (or `{ affected_rows = n }`), or nil and an error.
function M.connector:query(sql)
  if type(sql) ~= "string" then return nil, "query must be a string" end
  local res = {}
  for _, s in ipairs(statements(sql)) do
    local ok, r, err = pcall(statement, s)
    if not ok then
      local why = type(r) == "table" and r.sql or tostring(r)
      return nil, "broker's in-memory Postgres cannot read this statement (" .. why .. "): " .. s:gsub("%s+", " "):sub(1, 120)
    end
    if not r then return nil, err end
    if s:match("%S") then res = r end
  end
  return res
end

return M
