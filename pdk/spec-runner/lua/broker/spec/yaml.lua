-- The YAML of Kong's declarative configurations (written for broker from the YAML 1.2 spec; Kong reads it with
-- lyaml): block mappings and sequences by indentation, plain, quoted and block (`|`, `>`) scalars, one-line flow
-- collections (`[a, b]`, `{ a: 1 }`), comments and `---`. What else YAML has (anchors, tags, multi-line flow
-- collections, several documents) is refused with `nil, err` naming it, never read as something else.
local cjson = require "cjson.safe"
local null = cjson.null
local M = {}

local function fail(line, what) error({ yaml = "line " .. line .. ": " .. what }, 0) end

local function indent_of(s) return #s:match("^ *") end
local function blank(s) return s:match("^%s*$") or s:match("^%s*#") end

local ESCAPES = { n = "\n", t = "\t", r = "\r", ['"'] = '"', ["\\"] = "\\", ["/"] = "/", ["0"] = "\0", [" "] = " " }

-- a quoted scalar at the start of `s`: its value and the rest of `s`
local function quoted(s, line)
  local q = s:sub(1, 1)
  local out, i = {}, 2
  while i <= #s do
    local c = s:sub(i, i)
    if q == "'" and c == "'" then
      if s:sub(i + 1, i + 1) == "'" then out[#out + 1] = "'"; i = i + 2
      else return table.concat(out), s:sub(i + 1) end
    elseif q == '"' and c == '"' then return table.concat(out), s:sub(i + 1)
    elseif q == '"' and c == "\\" then
      local e = s:sub(i + 1, i + 1)
      if e == "u" then
        out[#out + 1] = utf8.char(tonumber(s:sub(i + 2, i + 5), 16) or fail(line, "a bad \\u escape"))
        i = i + 6
      else
        out[#out + 1] = ESCAPES[e] or fail(line, "the escape \\" .. e .. " is not read by broker")
        i = i + 2
      end
    else out[#out + 1] = c; i = i + 1 end
  end
  fail(line, "a quoted scalar is not closed on its line (one spanning lines is not read by broker)")
end

-- a plain scalar's type, as YAML's core schema resolves it
local function plain(s)
  if s == "" or s == "~" or s == "null" or s == "Null" or s == "NULL" then return null end
  if s == "true" or s == "True" or s == "TRUE" then return true end
  if s == "false" or s == "False" or s == "FALSE" then return false end
  if s:match("^[-+]?%d+$") or s:match("^[-+]?%d*%.%d+$") or s:match("^[-+]?%d+%.%d*$")
    or s:match("^[-+]?%d*%.?%d+[eE][-+]?%d+$") then return tonumber(s) end
  if s:match("^0x%x+$") then return tonumber(s:sub(3), 16) end
  if s:match("^0o[0-7]+$") then return tonumber(s:sub(3), 8) end
  if s == ".inf" or s == "+.inf" then return math.huge end
  if s == "-.inf" then return -math.huge end
  return s
end

local flow_value

-- a flow collection or scalar at the start of `s` (inside [ ] or { }): its value and the rest
local function flow_item(s, line, stops)
  s = s:match("^%s*(.*)$")
  local c = s:sub(1, 1)
  if c == "[" or c == "{" then return flow_value(s, line) end
  if c == '"' or c == "'" then return quoted(s, line) end
  local text = s:match("^([^" .. stops .. "]*)")
  return plain((text:gsub("%s+$", ""))), s:sub(#text + 1)
end

function flow_value(s, line)
  local open = s:sub(1, 1)
  local close = open == "[" and "]" or "}"
  local out = open == "[" and setmetatable({}, cjson.array_mt) or {}
  local rest = s:sub(2)
  while true do
    rest = rest:match("^%s*(.*)$")
    if rest == "" then fail(line, "a flow collection spanning lines is not read by broker") end
    if rest:sub(1, 1) == close then return out, rest:sub(2) end
    if open == "[" then
      local v
      v, rest = flow_item(rest, line, ",%]")
      out[#out + 1] = v
    else
      local k, v
      k, rest = flow_item(rest, line, ":,}")
      rest = rest:match("^%s*(.*)$")
      if rest:sub(1, 1) == ":" then v, rest = flow_item(rest:sub(2), line, ",}") else v = null end
      out[tostring(k)] = v
    end
    rest = rest:match("^%s*(.*)$")
    if rest == "" then fail(line, "a flow collection spanning lines is not read by broker") end
    if rest:sub(1, 1) == "," then rest = rest:sub(2)
    elseif rest:sub(1, 1) ~= close then fail(line, "expected ',' or '" .. close .. "' in a flow collection") end
  end
end

-- an inline value (after `key:` or `- `): a scalar or a one-line flow collection, comments dropped
local function inline(s, line)
  local c = s:sub(1, 1)
  if c == "&" or c == "*" or c == "!" then fail(line, "anchors, aliases and tags are not read by broker") end
  local v, rest
  if c == "[" or c == "{" then v, rest = flow_value(s, line)
  elseif c == '"' or c == "'" then v, rest = quoted(s, line)
  else return plain((s:gsub("%s+#.*$", ""):gsub("%s+$", ""))) end
  if not blank(rest) then fail(line, "unexpected text after a value: " .. rest) end
  return v
end

local Parser = {}
Parser.__index = Parser

-- the next line that is not blank or a comment, from the current one; nil at a document's end (`---`, `...`)
function Parser:peek()
  while self.lines[self.pos] and blank(self.lines[self.pos]) do self.pos = self.pos + 1 end
  local l = self.lines[self.pos]
  if l and (l:match("^%-%-%-%f[%s\0]") or l:match("^%.%.%.%f[%s\0]")) and not self.at_start then return nil end
  return l
end

-- a block scalar (`|`, `>`, with `-` or `+`) whose lines are indented deeper than `parent`
function Parser:block_scalar(header, parent)
  local style, chomp = header:sub(1, 1), header:match("[-+]") or ""
  local lines, indent = {}, nil
  while self.lines[self.pos] do
    local l = self.lines[self.pos]
    if not l:match("^%s*$") then
      local n = indent_of(l)
      if n <= parent then break end
      indent = indent or n
      if n < indent then break end
      lines[#lines + 1] = l:sub(indent + 1)
    else lines[#lines + 1] = "" end
    self.pos = self.pos + 1
  end
  local trailing = 0
  while lines[#lines] == "" do lines[#lines] = nil; trailing = trailing + 1 end
  local text
  if style == "|" then text = table.concat(lines, "\n")
  else
    -- folded: lines joined by a space, an empty line kept as a newline
    local out = {}
    for i, l in ipairs(lines) do
      if l == "" then out[#out + 1] = "\n"
      else
        if i > 1 and lines[i - 1] ~= "" then out[#out + 1] = " " end
        out[#out + 1] = l
      end
    end
    text = table.concat(out)
  end
  if #lines == 0 then return "" end
  if chomp == "-" then return text end
  if chomp == "+" then return text .. string.rep("\n", trailing + 1) end
  return text .. "\n"
end

-- a key at the start of a mapping line: the key and the rest after `:`, or nil when the line is no `key:`
local function key_of(s, line)
  local c = s:sub(1, 1)
  if c == '"' or c == "'" then
    local k, rest = quoted(s, line)
    local after = rest:match("^%s*:(.*)$")
    if after and (after == "" or after:match("^%s")) then return k, after end
    return nil
  end
  local k, after = s:match("^([^%s#][^:]-)%s*:(.*)$")
  if k and (after == "" or after:match("^%s")) then return k, after end
end

-- the value after `key:` or `- ` on line `n` (its text `s`), whose node is indented by `parent`
function Parser:after(s, parent, n)
  s = s:match("^%s*(.-)%s*$")
  if s == "" or s:match("^#") then
    local next_line = self:peek()
    if not next_line then return null end
    local i = indent_of(next_line)
    -- a sequence may sit at its key's own indentation
    if i > parent or (i == parent and next_line:sub(i + 1):match("^%-%s") ) then return self:node(i) end
    return null
  end
  if s:match("^[|>][-+]?%s*$") or s:match("^[|>][-+]?%s+#") then return self:block_scalar(s, parent) end
  return inline(s, n)
end

function Parser:sequence(indent)
  local out = setmetatable({}, cjson.array_mt)
  while true do
    local l = self:peek()
    if not l or indent_of(l) ~= indent or not l:sub(indent + 1):match("^%-%f[%s\0]") then return out end
    local n = self.pos
    local rest = l:sub(indent + 2)
    local body = rest:match("^%s*(.-)%s*$")
    if body ~= "" and not body:match("^#") and (body:match("^%-%s") or key_of(body, n)) then
      -- `- key: value` (or `- - x`): a node whose first line starts after the dash
      local col = indent + 1 + #rest:match("^%s*")
      self.lines[n] = string.rep(" ", col) .. body
      out[#out + 1] = self:node(col)
    else
      self.pos = n + 1
      out[#out + 1] = self:after(rest, indent, n)
    end
  end
end

function Parser:mapping(indent)
  local out = {}
  while true do
    local l = self:peek()
    if not l or indent_of(l) ~= indent then return out end
    local n = self.pos
    local k, rest = key_of(l:sub(indent + 1), n)
    if not k then fail(n, "expected 'key: value' at this indentation") end
    self.pos = n + 1
    out[k] = self:after(rest, indent, n)
  end
end

function Parser:node(indent)
  local l = self:peek()
  local s = l:sub(indent + 1)
  if s:match("^%-%f[%s\0]") then return self:sequence(indent) end
  if key_of(s, self.pos) then return self:mapping(indent) end
  self.pos = self.pos + 1
  return inline(s:match("^(.-)%s*$"), self.pos - 1)
end

--- The value of a YAML document, or nil and the error.
function M.decode(text)
  local lines = {}
  for l in (tostring(text):gsub("\r\n", "\n") .. "\n"):gmatch("([^\n]*)\n") do
    if l:match("^\t") then return nil, "line " .. #lines + 1 .. ": tabs indent nothing in YAML" end
    lines[#lines + 1] = l
  end
  local p = setmetatable({ lines = lines, pos = 1 }, Parser)
  local ok, v = pcall(function()
    p.at_start = true
    local first = p:peek()
    if first and first:match("^%-%-%-%s*$") then p.pos = p.pos + 1; first = p:peek() end
    p.at_start = false
    if not first then return null end
    local value = p:node(indent_of(first))
    p.at_start = true
    local left = p:peek()
    if left and left:match("^%-%-%-") then fail(p.pos, "several documents are not read by broker") end
    if left and not left:match("^%.%.%.%s*$") then fail(p.pos, "unexpected indentation") end
    return value
  end)
  if not ok then
    if type(v) == "table" and v.yaml then return nil, v.yaml end
    error(v, 0)
  end
  return v
end

return M
