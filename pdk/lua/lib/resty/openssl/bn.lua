-- resty.openssl.bn on the host's BigInts (written for broker from lua-resty-openssl's documented API):
-- new(number | string [, base 10 | 16 | 2 | 0]), from_dec / from_hex / from_binary / from_mpi, to_dec,
-- to_hex, to_binary([pad]), to_mpi, to_number, the arithmetic (as methods, module functions and
-- operators), comparisons and the is_* questions. A number is kept as a signed hex string (`v`).
-- Bad input answers nil, err as the library does; arithmetic on a value that is no number raises.
local H = __host
local M = { _VERSION = "1.5.1" }
local mt = { __index = M, __name = "resty.openssl.bn" }

local function wrap(hex) return setmetatable({ v = hex }, mt) end

function M.istype(v) return getmetatable(v) == mt end

-- a value's hex from a number or a string in `base`; nil and the failing step's name
local function parse(some, base)
  if some == nil then return "0" end
  if type(some) == "number" then return (H("bn_from_number", some)) end
  if type(some) ~= "string" then return nil, "set_bn: expect nil, a number or a string at #1" end
  local step = ({ [10] = "set_dec", [16] = "set_hex", [2] = "set_binary", [0] = "set_mpi" })[base or 10]
  if not step then return nil, "set_bn: unsupported base: " .. tostring(base) end
  local hex = H("bn_parse", some, base or 10)
  if not hex then return nil, step end
  return hex
end

function M.new(some, base)
  local hex, err = parse(some, base)
  if not hex then return nil, "bn.new: " .. err end
  return wrap(hex)
end

function M.dup(b)
  if not M.istype(b) then return nil, "bn.dup: expect a bn ctx at #1" end
  return wrap(b.v)
end

function M:set(some, base)
  if type(some) ~= "number" and type(some) ~= "string" then return nil, "expect a number or a string at #1" end
  local hex, err = parse(some, base)
  if not hex then return nil, "bn:set: " .. err end
  self.v = hex
  return self
end

for name, base in pairs({ dec = 10, hex = 16, binary = 2, mpi = 0 }) do
  M["from_" .. name] = function(s)
    if type(s) ~= "string" then return nil, "bn.from_" .. name .. ": expect a string at #1" end
    local hex, err = parse(s, base)
    if not hex then return nil, "bn.from_" .. name .. ": " .. err end
    return wrap(hex)
  end
end

function M:to_binary(pad)
  if pad ~= nil and type(pad) ~= "number" then return nil, "bn:to_binary: expect a number at #1" end
  local bin = H("bn_format", self.v, "binary", pad)
  if not bin then return nil, "bn:to_binary" end
  return bin
end
function M:to_mpi() return (H("bn_format", self.v, "mpi")) end
function M:to_hex() return (H("bn_format", self.v, "hex")) end
function M:to_dec() return (H("bn_format", self.v, "dec")) end
function M:to_number() return (H("bn_format", self.v, "number")) end
M.tonumber = M.to_number
mt.__tostring = M.to_dec

-- an operand: a bn, or a Lua number made into one; anything else raises as the library does
local function operand(op, v)
  if M.istype(v) then return v.v end
  if type(v) == "number" then return (H("bn_from_number", v)) end
  error("cannot " .. op .. " a " .. type(v) .. " to bignum", 3)
end

-- OpenSSL's function behind each operation, named when it fails (a zero divisor)
local FAILS = {
  add = "BN_add", sub = "BN_sub", mul = "BN_mul", div = "BN_div", mod = "BN_div", sqr = "BN_sqr",
  exp = "BN_exp", gcd = "BN_gcd", lshift = "BN_lshift", rshift = "BN_rshift", mod_add = "BN_mod_add",
  mod_sub = "BN_mod_sub", mod_mul = "BN_mod_mul", mod_exp = "BN_mod_exp", mod_sqr = "BN_mod_sqr",
}

local function calc(op, ...)
  local args = table.pack(...)
  for i = 1, args.n do args[i] = operand(op, args[i]) end
  local hex = H("bn_calc", op, args[1], args[2], args[3])
  if not hex then error(FAILS[op] .. "() failed", 2) end -- level 2: every caller tail-calls calc
  return wrap(hex)
end

for _, op in ipairs({ "add", "sub", "mul", "div", "mod", "exp", "gcd" }) do
  M[op] = function(a, b) return calc(op, a, b) end
end
for _, op in ipairs({ "mod_add", "mod_sub", "mod_mul", "mod_exp" }) do
  M[op] = function(a, b, m) return calc(op, a, b, m) end
end
function M.sqr(a) return calc("sqr", a) end
function M.mod_sqr(a, m) return calc("mod_sqr", a, m) end
function M.lshift(a, bits) return calc("lshift", a, bits) end
function M.rshift(a, bits) return calc("rshift", a, bits) end
M.idiv, M.pow, M.mod_pow = M.div, M.exp, M.mod_exp

mt.__add, mt.__sub, mt.__mul, mt.__div, mt.__idiv, mt.__mod = M.add, M.sub, M.mul, M.div, M.div, M.mod
mt.__shl, mt.__shr = M.lshift, M.rshift
function mt.__unm(a) return wrap((H("bn_calc", "unm", a.v))) end
local function nyi() error("NYI", 2) end
mt.__band, mt.__bor, mt.__bxor, mt.__bnot = nyi, nyi, nyi, nyi

local function cmp(a, b) return H("bn_cmp", operand("compare", a), operand("compare", b)) end
function mt.__eq(a, b) return M.istype(a) and M.istype(b) and cmp(a, b) == 0 end
function mt.__lt(a, b) return cmp(a, b) < 0 end
function mt.__le(a, b) return cmp(a, b) <= 0 end

function M:is_zero() return cmp(self, 0) == 0 end
function M:is_one() return self.v == "1" end
function M:is_odd() return (H("bn_calc", "mod", self.v, "2")) ~= "0" end
function M:is_word(n)
  if type(n) ~= "number" then return nil, "bn:is_word: expect a number at #1" end
  return cmp(self, n) == 0
end
function M:is_prime(nchecks)
  if nchecks ~= nil and type(nchecks) ~= "number" then return nil, "bn:is_prime: expect a number at #1" end
  return (H("bn_is_prime", self.v, nchecks))
end

function M.generate_prime()
  error("bn.generate_prime is not emulated by broker", 2)
end

return M
