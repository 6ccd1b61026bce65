/**
 * Where a parse error is, as line and column: JSON.parse's messages give a character position (or
 * none), and Node 20's SyntaxError of an ES module gives no place at all. The CLI, the PDK runner and
 * the config loader say "at line 3, column 34" with these.
 */
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

/** Line and column (both from 1) of character `index` of `text`. */
export function lineColumn(text: string, index: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(index, text.length)))
  const lines = before.split(/\r\n|\r|\n/)
  return { line: lines.length, column: lines.at(-1)!.length + 1 }
}

/**
 * JSON.parse's error about `text` as "<what> at line L, column C": V8's words without its position
 * or its quote of the text, the place found by scanning the text (the same on every Node version).
 */
export function jsonErrorMessage(text: string, err: unknown): string {
  const words = String((err as Error)?.message ?? err)
    .replace(/, "[\s\S]*" is not valid JSON$/, '')
    .replace(/ in JSON at position \d+( \(line \d+ column \d+\))?$/, '')
    .replace(/^Unexpected end of JSON input$/, 'Unexpected end of the text')
  const at = jsonErrorIndex(text) ?? Number(/at position (\d+)/.exec(String((err as Error)?.message))?.[1] ?? NaN)
  if (Number.isNaN(at)) return words
  const { line, column } = lineColumn(text, at)
  return `${words} at line ${line}, column ${column}`
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9'

/** The index of the first character that makes `text` invalid JSON (RFC 8259), or undefined when it is valid. */
export function jsonErrorIndex(text: string): number | undefined {
  let i = 0
  const fail = (): never => {
    throw new Failed(i)
  }
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++
  }
  const want = (c: string) => (text[i] === c ? i++ : fail())
  const string = () => {
    want('"')
    for (;;) {
      const c = text[i]
      if (c === undefined || c < ' ') fail()
      if (c === '"') return void i++
      if (c === '\\') {
        i++
        if (text[i] === 'u')
          for (let k = 0; k < 4; k++) {
            i++
            if (!/^[0-9a-fA-F]$/.test(text[i] ?? '')) fail()
          }
        else if (text[i] === undefined || !'"\\/bfnrt'.includes(text[i]!)) fail()
      }
      i++
    }
  }
  const value = (): void => {
    space()
    const c = text[i]
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']'
      i++
      space()
      if (text[i] === close) return void i++
      for (;;) {
        space()
        if (c === '{') {
          string()
          space()
          want(':')
        }
        value()
        space()
        if (text[i] === ',') i++
        else return void want(close)
      }
    }
    if (c === '"') return string()
    const word = c === 't' ? 'true' : c === 'f' ? 'false' : c === 'n' ? 'null' : undefined
    if (word) {
      // Where V8 stops too: at the first letter that does not fit (`nope` fails at its `o`).
      for (const letter of word)
        if (text[i] === letter) i++
        else fail()
      return
    }
    number()
  }
  // Where V8 stops too: at the character a number cut short needs a digit for (`1.}` fails at its `}`).
  const digits = (atLeastOne: boolean) => {
    if (atLeastOne && !isDigit(text[i])) fail()
    while (isDigit(text[i])) i++
  }
  const number = () => {
    if (text[i] === '-') i++
    if (text[i] === '0') i++
    else digits(true)
    if (text[i] === '.') {
      i++
      digits(true)
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++
      if (text[i] === '+' || text[i] === '-') i++
      digits(true)
    }
  }
  try {
    value()
    space()
    if (i < text.length) fail()
    return undefined
  } catch (err) {
    // A nesting deeper than the stack: no place to give.
    if (err instanceof Failed) return err.index
    return undefined
  }
}

class Failed {
  constructor(readonly index: number) {}
}

/** Where a JavaScript syntax error is: the file (absolute), its line and column (from 1). */
export interface SourcePlace {
  file: string
  line: number
  column?: number
}

/**
 * Where V8 decorated a SyntaxError's stack with its place (CommonJS, vm scripts, newer Node's ES
 * modules): `<file>:<line>`, the source line, then carets under the bad token.
 */
function stackPlace(err: Error): SourcePlace | undefined {
  const [first = '', text, carets] = String(err.stack ?? '').split('\n', 3)
  const m = /^(file:\/\/.+|\/.+|[A-Za-z]:\\.+):(\d+)$/.exec(first)
  if (!m) return undefined
  const file = m[1]!.startsWith('file:') ? fileURLToPath(m[1]!) : m[1]!
  const caret = carets !== undefined && text !== undefined ? carets.indexOf('^') : -1
  return { file, line: Number(m[2]), ...(caret >= 0 ? { column: caret + 1 } : {}) }
}

/**
 * Where the SyntaxError thrown while importing `file` is, or undefined for any other error. The
 * stack names the place for CommonJS and on newer Node; Node 20 gives an ES module's error no place,
 * so the file is then checked again by \`node --check\` (V8's own parser: the same error, now placed),
 * only on this failure path.
 */
export async function syntaxErrorPlace(err: unknown, file: string): Promise<SourcePlace | undefined> {
  if (!(err instanceof SyntaxError)) return undefined
  const placed = stackPlace(err)
  if (placed) return placed
  let source: string
  try {
    source = await readFile(file, 'utf8')
  } catch {
    return undefined
  }
  const checked = await new Promise<string>((resolve) => {
    const child = execFile(
      process.execPath,
      ['--input-type=module', '--check'],
      { timeout: 10_000, encoding: 'utf8' },
      (_err, _out, stderr) => resolve(stderr),
    )
    child.stdin?.end(source)
  })
  const m = /^\[stdin\]:(\d+)\n[^\n]*\n( *)\^/.exec(checked)
  return m ? { file, line: Number(m[1]), column: m[2]!.length + 1 } : undefined
}

/** `line 3, column 10` (or `line 3`). */
export const lineText = (place: SourcePlace): string =>
  `line ${place.line}${place.column === undefined ? '' : `, column ${place.column}`}`

/** `file:3:10` (or `file:3`), the way compilers and editors name a place. */
export const placeText = (file: string, place: SourcePlace): string =>
  `${file}:${place.line}${place.column === undefined ? '' : `:${place.column}`}`
