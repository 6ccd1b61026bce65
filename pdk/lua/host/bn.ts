/**
 * What broker's resty.openssl.bn needs: OpenSSL's BIGNUMs as JS BigInts. A number crosses to Lua and back
 * as a signed hex string (`-5b25`), so the Lua object holds no host state. Parsing follows OpenSSL's
 * BN_dec2bn / BN_hex2bn (the longest run of digits after an optional `-`; none is a failure), output
 * BN_bn2hex (upper case, whole bytes), BN_bn2dec, BN_bn2bin (the magnitude) and the MPI format.
 */
import { randomBytes } from 'node:crypto'
import { bytesOf } from './codec.js'
import type { HostOp } from './types.js'

const big = (hex: unknown): bigint => {
  const s = bytesOf(hex).toString('latin1')
  return s.startsWith('-') ? -BigInt(`0x${s.slice(1)}`) : BigInt(`0x${s}`)
}
const hexOf = (n: bigint): string => (n < 0n ? `-${(-n).toString(16)}` : n.toString(16))
const abs = (n: bigint): bigint => (n < 0n ? -n : n)

/** The magnitude's bytes, big-endian, none for 0 (BN_bn2bin). */
function magnitude(n: bigint): Buffer {
  const m = abs(n)
  if (m === 0n) return Buffer.alloc(0)
  const hex = m.toString(16)
  return Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex')
}

const fromBytes = (b: Buffer): bigint => (b.length === 0 ? 0n : BigInt(`0x${b.toString('hex')}`))

/** The longest `-?digits` prefix OpenSSL's BN_dec2bn / BN_hex2bn would read, or undefined. */
function readDigits(s: string, base: 10 | 16): bigint | undefined {
  const m = (base === 10 ? /^(-?)([0-9]+)/ : /^(-?)([0-9a-fA-F]+)/).exec(s)
  if (!m) return undefined
  const n = BigInt(base === 10 ? m[2]! : `0x${m[2]!}`)
  return m[1] ? -n : n
}

/** MPI: a 4-byte big-endian length, then the magnitude with its top bit as the sign. */
function readMpi(b: Buffer): bigint | undefined {
  if (b.length < 4) return undefined
  const len = b.readUInt32BE(0)
  if (b.length !== 4 + len) return undefined
  if (len === 0) return 0n
  const body = Buffer.from(b.subarray(4))
  const negative = (body[0]! & 0x80) !== 0
  body[0] = body[0]! & 0x7f
  const n = fromBytes(body)
  return negative ? -n : n
}

function writeMpi(n: bigint): Buffer {
  let body = magnitude(n)
  if (body.length > 0 && (body[0]! & 0x80) !== 0) body = Buffer.concat([Buffer.from([0]), body])
  if (n < 0n) body[0] = body[0]! | 0x80
  const head = Buffer.alloc(4)
  head.writeUInt32BE(body.length)
  return Buffer.concat([head, body])
}

/** BN_bn2hex: upper case, each byte two digits, `0` for zero. */
function toHex(n: bigint): string {
  if (n === 0n) return '0'
  return (n < 0n ? '-' : '') + magnitude(n).toString('hex').toUpperCase()
}

/** A remainder in [0, |m|) (OpenSSL's BN_nnmod, which the BN_mod_* operations answer). */
const nnmod = (a: bigint, m: bigint): bigint => ((a % m) + abs(m)) % abs(m)

function modPow(base: bigint, exp: bigint, m: bigint): bigint {
  let result = 1n
  let b = nnmod(base, m)
  let e = exp
  while (e > 0n) {
    if (e & 1n) result = (result * b) % m
    b = (b * b) % m
    e >>= 1n
  }
  return nnmod(result, m)
}

function gcd(a: bigint, b: bigint): bigint {
  let [x, y] = [abs(a), abs(b)]
  while (y) [x, y] = [y, x % y]
  return x
}

/** Miller-Rabin with random bases: `rounds` of them (OpenSSL's default count is at least 64 for its error bound). */
function isProbablePrime(n: bigint, rounds: number): boolean {
  if (n < 2n) return false
  for (const p of [2n, 3n, 5n, 7n, 11n, 13n, 17n, 19n, 23n, 29n, 31n, 37n]) {
    if (n === p) return true
    if (n % p === 0n) return false
  }
  let d = n - 1n
  let r = 0
  while ((d & 1n) === 0n) [d, r] = [d >> 1n, r + 1]
  const bytes = magnitude(n).length
  for (let i = 0; i < rounds; i++) {
    const a = 2n + (fromBytes(randomBytes(bytes + 8)) % (n - 3n))
    let x = modPow(a, d, n)
    if (x === 1n || x === n - 1n) continue
    let composite = true
    for (let j = 1; j < r; j++) {
      x = (x * x) % n
      if (x === n - 1n) {
        composite = false
        break
      }
    }
    if (composite) return false
  }
  return true
}

type Calc = (a: bigint, b: bigint, m: bigint) => bigint
const CALC: Record<string, Calc> = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b) => a * b,
  // BN_div truncates toward zero and BN_mod keeps the dividend's sign, as BigInt's / and % do (the library's
  // README calls `/` floor division, which it is for the positive numbers it shows)
  div: (a, b) => a / b,
  mod: (a, b) => a % b,
  sqr: (a) => a * a,
  exp: (a, b) => (b < 0n ? 0n : a ** b),
  gcd: (a, b) => gcd(a, b),
  unm: (a) => -a,
  lshift: (a, b) => a << b,
  rshift: (a, b) => (a < 0n ? -(-a >> b) : a >> b),
  mod_add: (a, b, m) => nnmod(a + b, m),
  mod_sub: (a, b, m) => nnmod(a - b, m),
  mod_mul: (a, b, m) => nnmod(a * b, m),
  mod_exp: (a, b, m) => (abs(m) === 1n ? 0n : modPow(a, b, abs(m))),
  mod_sqr: (a, m) => nnmod(a * a, m),
}
/** The operations whose divisor (the second operand, or the modulus) may not be zero: OpenSSL fails them. */
const DIVIDES: Record<string, 'b' | 'm'> = {
  div: 'b',
  mod: 'b',
  mod_sqr: 'b',
  mod_add: 'm',
  mod_sub: 'm',
  mod_mul: 'm',
  mod_exp: 'm',
}

export const BN_OPS: Record<string, HostOp> = {
  /** A number from a string in base 10, 16, 2 (bytes) or 0 (MPI): its hex, or nothing (the Lua side names the failure). */
  bn_parse: (_s, text, base) => {
    const b = bytesOf(text)
    const n =
      base === 2 ? fromBytes(b) : base === 0 ? readMpi(b) : readDigits(b.toString('latin1'), base === 16 ? 16 : 10)
    return n === undefined ? [] : [hexOf(n)]
  },
  /** A Lua number (BN_set_word takes its integer part). */
  bn_from_number: (_s, v) => [hexOf(BigInt(Math.trunc(Number(v))))],
  /** A number written as `dec`, `hex`, `binary` (padded to `pad` bytes), `mpi` or a Lua `number` (BN_get_word). */
  bn_format: (_s, hex, kind, pad) => {
    const n = big(hex)
    switch (kind) {
      case 'dec':
        return [n.toString(10)]
      case 'hex':
        return [toHex(n)]
      case 'mpi':
        return [writeMpi(n)]
      case 'number': {
        const m = abs(n)
        // BN_get_word: the magnitude, all ones (2^64 - 1, a double 2^64 as LuaJIT's tonumber makes it) past one word
        return [m > 0xffffffffffffffffn ? 2 ** 64 : Number(m)]
      }
      default: {
        const bytes = magnitude(n)
        if (pad === undefined || pad === null) return [bytes]
        const size = Number(pad)
        if (bytes.length > size) return []
        return [Buffer.concat([Buffer.alloc(size - bytes.length), bytes])]
      }
    }
  },
  /** One arithmetic operation on hex operands: its hex, or nothing when OpenSSL would fail (a zero divisor). */
  bn_calc: (_s, op, a, b, m) => {
    const fn = CALC[String(op)]
    if (!fn) throw new Error(`broker: no bignum operation ${String(op)}`)
    const [x, y, z] = [big(a), b === undefined ? 0n : big(b), m === undefined ? 0n : big(m)]
    const divisor = DIVIDES[String(op)]
    if (divisor && (divisor === 'b' ? y : z) === 0n) return []
    return [hexOf(fn(x, y, z))]
  },
  /** -1, 0 or 1 as `a` is below, equal to or above `b`. */
  bn_cmp: (_s, a, b) => {
    const [x, y] = [big(a), big(b)]
    return [x < y ? -1 : x > y ? 1 : 0]
  },
  /** Whether the number is (probably) prime after `checks` Miller-Rabin rounds (64 when 0 or none). */
  bn_is_prime: (_s, hex, checks) => [isProbablePrime(big(hex), Number(checks) > 0 ? Number(checks) : 64)],
}
