/**
 * LuaJIT's 64-bit integer literals (`4294967296LL`, `0xffULL`, as lua-resty-kafka writes them) in a module's
 * source, rewritten before Lua 5.4 loads it: the suffix dropped, so the number is a 64-bit integer, which is
 * what LuaJIT's int64 cdata holds. Strings and comments are left alone; a source without such a literal is
 * returned as it is.
 */

const SUFFIX = /^(?:ULL|LL|ull|ll|uLL|Ull)(?![A-Za-z0-9_])/
const QUICK = /[0-9a-fA-F](?:U?LL|u?ll)(?![A-Za-z0-9_])/

const isDigit = (c: number) => c >= 0x30 && c <= 0x39
const isIdent = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || isDigit(c)

/** The level of a long bracket opening at `i` (`[[` is 0, `[==[` is 2), or -1. */
function longBracket(s: string, i: number): number {
  if (s[i] !== '[') return -1
  let j = i + 1
  while (s[j] === '=') j++
  return s[j] === '[' ? j - i - 1 : -1
}

/** The source with LuaJIT's LL / ULL suffixes removed from number literals, or the same Buffer when it has none. */
export function dropLuajitLiterals(source: Buffer): Buffer {
  const s = source.toString('latin1')
  if (!QUICK.test(s)) return source
  let out = ''
  let last = 0
  let i = 0
  while (i < s.length) {
    const c = s.charCodeAt(i)
    if (s.startsWith('--', i)) {
      const level = longBracket(s, i + 2)
      const end = level >= 0 ? s.indexOf(`]${'='.repeat(level)}]`, i) : s.indexOf('\n', i)
      i = end === -1 ? s.length : end + 1
    } else if (c === 0x22 || c === 0x27) {
      let j = i + 1
      while (j < s.length && s[j] !== s[i] && s[j] !== '\n') j += s[j] === '\\' ? 2 : 1
      i = j + 1
    } else if (longBracket(s, i) >= 0) {
      const level = longBracket(s, i)
      const end = s.indexOf(`]${'='.repeat(level)}]`, i)
      i = end === -1 ? s.length : end + level + 2
    } else if (isDigit(c) && (i === 0 || !isIdent(s.charCodeAt(i - 1)))) {
      const m = /^(?:0[xX][0-9a-fA-F]+|[0-9]+)/.exec(s.slice(i, i + 40))!
      const j = i + m[0].length
      const suffix = SUFFIX.exec(s.slice(j, j + 4))
      if (suffix) {
        out += s.slice(last, j)
        last = j + suffix[0].length
      }
      i = j
    } else if (isIdent(c)) {
      while (i < s.length && isIdent(s.charCodeAt(i))) i++
    } else i++
  }
  if (last === 0) return source
  return Buffer.from(out + s.slice(last), 'latin1')
}
