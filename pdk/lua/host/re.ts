/**
 * ngx.re on JS RegExp: a PCRE pattern is translated where JS means the same, and refused, naming
 * the construct, where it cannot be (a silently different match would be worse than an error).
 * Offsets are bytes, as ngx.re's are.
 */
import { bytesOf } from './codec.js'
import type { HostOp } from './types.js'
import { ClearingMap } from '../../../util/clearing-map.js'

/** A PCRE construct JS RegExp cannot match the same way. */
export class UntranslatableRegex extends Error {}

/** A pattern PCRE would not compile either: OpenResty answers it as `nil, err`, not as a Lua error. */
export class BadRegex extends Error {}

const REFUSED: Array<[RegExp, string]> = [
  [/^\(\?>/, 'atomic group (?>...)'],
  [/^\(\?[=!<]?\(/, 'conditional group (?(...)'],
  [/^\(\?(R|\d+|&\w+|P>\w+)\)/, 'recursion (?R) / subroutine call'],
  [/^\(\*/, 'backtracking verb (*...)'],
  [/^\(\?[a-zA-Z-]+:/, 'inline flag group (?i:...)'],
  [/^\(\?#/, 'comment group (?#...)'],
]

interface Compiled {
  re: RegExp
  anchored: boolean
}

const cache = new ClearingMap<string, Compiled>(1000)

/** Translates a PCRE pattern with ngx.re options into a JS RegExp (global, for lastIndex). */
export function compile(pattern: string, options = ''): Compiled {
  const key = `${options}\u0000${pattern}`
  const hit = cache.get(key)
  if (hit) return hit
  let flags = 'g'
  let anchored = false
  let extended = false
  for (const o of options) {
    if ('ims'.includes(o)) flags += flags.includes(o) ? '' : o
    else if (o === 'x') extended = true
    else if (o === 'a') anchored = true
    else if (!'jodJDuU'.includes(o)) throw new Error(`unknown flag "${o}" (flags "${options}")`)
  }
  let src = pattern
  const lead = /^\(\?([imsx]+)\)/.exec(src)
  if (lead) {
    for (const f of lead[1]!)
      if (f === 'x') extended = true
      else if (!flags.includes(f)) flags += f
    src = src.slice(lead[0].length)
  }
  const multiline = flags.includes('m')
  let out = ''
  let inClass = false
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!
    const rest = src.slice(i)
    if (c === '\\') {
      const n = src[i + 1] ?? ''
      if ('QEKGCX'.includes(n) && n !== '') throw new UntranslatableRegex(`\\${n}`)
      if (!inClass && n === 'A') out += multiline ? '(?<![\\s\\S])' : '^'
      else if (!inClass && n === 'z') out += '(?![\\s\\S])'
      else if (!inClass && n === 'Z') out += '(?=\\n?(?![\\s\\S]))'
      else if (n === 'h') out += inClass ? ' \\t' : '[ \\t]'
      else if (n === 'H' && !inClass) out += '[^ \\t]'
      else if (n === 'x' && src[i + 2] === '{') {
        const m = /^\\x\{([0-9a-fA-F]+)\}/.exec(rest)
        if (!m || parseInt(m[1]!, 16) > 0xff) throw new UntranslatableRegex(`\\x{...} beyond \\xff`)
        out += `\\x${m[1]!.padStart(2, '0')}`
        i += m[0].length - 2
      } else if (n === 'p' || n === 'P') throw new UntranslatableRegex(`\\${n}{...} Unicode property`)
      else out += c + n
      i++
      continue
    }
    if (inClass) {
      if (rest.startsWith('[:')) throw new UntranslatableRegex('POSIX class [[:name:]]')
      if (c === ']') inClass = false
      out += c
      continue
    }
    if (extended && /\s/.test(c)) continue
    if (extended && c === '#') {
      while (i < src.length && src[i] !== '\n') i++
      continue
    }
    if (c === '[') {
      inClass = true
      out += c
      if (src[i + 1] === '^') out += src[++i]
      if (src[i + 1] === ']') out += '\\' + src[++i]
      continue
    }
    if (c === '(') {
      for (const [re, name] of REFUSED) if (re.test(rest)) throw new UntranslatableRegex(name)
      if (/^\(\?[imsx-]+\)/.test(rest)) throw new UntranslatableRegex('inline flags (?i) after the start')
      if (rest.startsWith('(?P<')) {
        out += '(?<'
        i += 3
        continue
      }
      const back = /^\(\?P=(\w+)\)/.exec(rest)
      if (back) {
        out += `\\k<${back[1]}>`
        i += back[0].length - 1
        continue
      }
    }
    if ('*+?}'.includes(c) && src[i + 1] === '+') throw new UntranslatableRegex(`possessive quantifier ${c}+`)
    if (c === '$' && !multiline) out += '(?=\\n?(?![\\s\\S]))'
    else out += c
  }
  let re: RegExp
  try {
    re = new RegExp(out, flags + (anchored ? 'y' : ''))
  } catch (e) {
    throw new BadRegex(
      `pcre_compile() failed: ${(e as Error).message.replace(/^Invalid regular expression: (\/[\s\S]*\/[a-z]*: )?/, '')} in "${pattern}"`,
      { cause: e },
    )
  }
  const compiled = { re, anchored }
  cache.set(key, compiled)
  return compiled
}

/** The subject as JS text, and a way to turn its character offsets into bytes. */
function textOf(subject: unknown): { text: string; toByte: (i: number) => number; toChar: (b: number) => number } {
  if (Buffer.isBuffer(subject)) {
    const text = subject.toString('latin1')
    return { text, toByte: (i) => i, toChar: (b) => b }
  }
  const text = typeof subject === 'string' ? subject : String(bytesOf(subject))
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return { text, toByte: (i) => i, toChar: (b) => b }
  return {
    text,
    toByte: (i) => Buffer.byteLength(text.slice(0, i)),
    toChar: (b) => Buffer.from(text).subarray(0, b).toString('utf8').length,
  }
}

export const RE_OPS: Record<string, HostOp> = {
  /** (subject, regex, options, init byte 1-based) → from, to (bytes, 1-based inclusive), captures, names. */
  re_exec: (_s, subject, regex, options, init) => {
    let re: RegExp
    try {
      re = compile(String(regex), typeof options === 'string' ? options : '').re
    } catch (e) {
      // false, err: the Lua side answers nil, err as ngx.re does for a pattern that does not compile
      if (e instanceof BadRegex) return [false, e.message]
      throw e
    }
    const t = textOf(subject)
    re.lastIndex = t.toChar(Math.max(0, Number(init ?? 1) - 1))
    const m = re.exec(t.text)
    if (!m) return [undefined]
    const caps = m.map((x) => (x === undefined ? false : x))
    return [t.toByte(m.index) + 1, t.toByte(m.index + m[0].length), caps, m.groups ? { ...m.groups } : undefined]
  },
  /** Whether a pattern compiles: true, or false and PCRE's message (other refusals raise). */
  re_compiles: (_s, regex, options) => {
    try {
      compile(String(regex), typeof options === 'string' ? options : '')
      return [true]
    } catch (e) {
      if (e instanceof BadRegex) return [false, e.message]
      throw e
    }
  },
  re_check: (_s, regex, options) => {
    compile(String(regex), typeof options === 'string' ? options : '')
    return [true]
  },
}
