/**
 * Hashes and codes are base64url, so about one in 64 starts with "-" and oclif would read it as a
 * flag. A long base64url token that is not one of the command's flags is moved behind "--", where
 * oclif takes it as the argument it is.
 */
export function dashArg(argv: readonly string[], flags: Readonly<Record<string, { char?: string }>>): string[] {
  const known = new Set([
    '--help',
    '--json',
    ...Object.entries(flags).flatMap(([name, f]) => [`--${name}`, ...(f.char ? [`-${f.char}`] : [])]),
  ])
  const end = argv.indexOf('--')
  const head = end < 0 ? [...argv] : argv.slice(0, end)
  const tail = end < 0 ? [] : argv.slice(end + 1)
  const moved = head.filter((token) => /^-[\w-]{15,}$/.test(token) && !known.has(token))
  if (!moved.length) return [...argv]
  return [...head.filter((token) => !moved.includes(token)), '--', ...moved, ...tail]
}
