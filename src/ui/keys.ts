import type { Key } from 'ink'

/**
 * A chunk of input as the keys it holds: text runs and Enter presses. Text typed faster than the
 * terminal is read (or pasted) arrives with its Enter in one chunk, which Ink hands over as text.
 */
export function splitChunk(input: string, key: Key): Array<[string, Key]> {
  if (key.return || input.length < 2 || !/[\r\n]/.test(input)) return [[input, key]]
  return input
    .split(/(\r\n|\r|\n)/)
    .filter(Boolean)
    .map((part): [string, Key] => (/^[\r\n]+$/.test(part) ? ['', { ...key, return: true }] : [part, key]))
}
