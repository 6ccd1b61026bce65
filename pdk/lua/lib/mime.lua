-- LuaSocket's mime module (Kong ships LuaSocket), written for broker from LuaSocket's documented API: the
-- low-level `b64`/`unb64` and `qp`/`unqp` a whole string at a time. With a second chunk D, each works on C .. D
-- and returns what it could not finish as the second value, as the documentation says; without D the first
-- value is complete (padded) and the second is nil. The ltn12 filters (`encode`, `decode`, `wrap`, `normalize`)
-- raise an error naming themselves.
local M = { _VERSION = "MIME 1.0.3" }

local ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local DECODE = {}
for i = 1, 64 do DECODE[ALPHABET:byte(i)] = i - 1 end

local function encode3(s)
  local a, b, c = s:byte(1, 3)
  local n = a * 65536 + (b or 0) * 256 + (c or 0)
  local out = {}
  for i = 1, 4 do
    local v = (n >> (6 * (4 - i))) & 63
    out[i] = ALPHABET:sub(v + 1, v + 1)
  end
  if not b then out[3], out[4] = "=", "=" elseif not c then out[4] = "=" end
  return table.concat(out)
end

--- Base64 of C .. D: the largest prefix of whole 3-byte groups and the rest (all of it, padded, without D).
function M.b64(c, d)
  if c == nil then return nil end
  local s = tostring(c) .. (d and tostring(d) or "")
  local whole = d and (#s - #s % 3) or #s
  local out = {}
  for i = 1, whole, 3 do out[#out + 1] = encode3(s:sub(i, math.min(i + 2, whole))) end
  if d then return table.concat(out), s:sub(whole + 1) end
  return table.concat(out), nil
end

--- The bytes base64 C .. D encodes (characters outside the alphabet are skipped), and the unfinished rest.
function M.unb64(c, d)
  if c == nil then return nil end
  local s = tostring(c) .. (d and tostring(d) or "")
  local out, group = {}, {}
  local pending = ""
  for i = 1, #s do
    local ch = s:byte(i)
    local v = DECODE[ch]
    if v or ch == 61 then
      group[#group + 1] = v or -1
      pending = pending .. string.char(ch)
      if #group == 4 then
        local n, bytes = 0, 3
        for k = 1, 4 do
          if group[k] < 0 then bytes = math.min(bytes, k - 2) n = n * 64 else n = n * 64 + group[k] end
        end
        local three = string.char((n >> 16) & 255, (n >> 8) & 255, n & 255)
        out[#out + 1] = three:sub(1, math.max(bytes, 0))
        group, pending = {}, ""
      end
    end
  end
  if d then return table.concat(out), pending end
  return table.concat(out), nil
end

local function safe(b) return (b >= 33 and b <= 60) or (b >= 62 and b <= 126) end

--- Quoted-printable of C .. D: unsafe bytes as =XX, a space or tab before a line break encoded, line breaks
--- (CRLF or LF) written with `marker` (CRLF by default).
function M.qp(c, d, marker)
  if c == nil then return nil end
  marker = marker or "\r\n"
  local s = tostring(c) .. (d and tostring(d) or "")
  local out = {}
  local i = 1
  while i <= #s do
    local b = s:byte(i)
    if b == 13 and s:byte(i + 1) == 10 then
      out[#out + 1] = marker
      i = i + 2
    elseif b == 10 then
      out[#out + 1] = marker
      i = i + 1
    else
      local nxt = s:byte(i + 1)
      local at_end = nxt == nil or nxt == 13 or nxt == 10
      if safe(b) or ((b == 32 or b == 9) and not at_end) then
        out[#out + 1] = string.char(b)
      else
        out[#out + 1] = string.format("=%02X", b)
      end
      i = i + 1
    end
  end
  if d then return table.concat(out), "" end
  return table.concat(out), nil
end

--- The bytes quoted-printable C .. D encodes: =XX decoded, soft line breaks (= before a line break) removed.
function M.unqp(c, d)
  if c == nil then return nil end
  local s = tostring(c) .. (d and tostring(d) or "")
  s = s:gsub("=\r?\n", "")
  s = s:gsub("=(%x%x)", function(h) return string.char(tonumber(h, 16)) end)
  if d then return s, "" end
  return s, nil
end

local function not_emulated(name)
  return function()
    error("mime." .. name .. " is not emulated by broker (its ltn12 filters); mime.b64, unb64, qp and unqp are", 2)
  end
end
for _, name in ipairs({ "encode", "decode", "wrap", "normalize", "dot", "eol", "qpwrp", "wrp", "stuff" }) do
  M[name] = not_emulated(name)
end

return M
