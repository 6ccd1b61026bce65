/**
 * What an app's framework may read a parameter name as. A callback parameter named `id.token` is
 * `$_GET['id_token']` in PHP, `state[]` is Express's `req.query.state` (an array), ` error` is PHP's
 * `error`: a name the broker never speaks can still land on a name it does. These are the readings
 * of the common frameworks, all of them at once:
 * - case (ASP.NET, many ORMs): lower case;
 * - PHP: leading whitespace dropped, `.` and space (and an unclosed `[`) turned into `_`; a NUL ends the name;
 * - PHP, Rails and `qs` (Express): a bracket suffix (`a[]`, `a[x]`) names `a`;
 * - `qs` with `allowDots`: `a.b` names `a`.
 */
export function readings(name: string): Set<string> {
  const nul = name.indexOf('\0')
  const lower = (nul >= 0 ? name.slice(0, nul) : name).toLowerCase().trim()
  const bracket = lower.indexOf('[')
  const base = bracket > 0 ? lower.slice(0, bracket) : lower
  const dot = lower.indexOf('.')
  const php = (s: string) => s.replace(/[.\s[]/g, '_')
  const out = new Set([lower, base, php(lower), php(base)])
  if (dot > 0) out.add(lower.slice(0, dot))
  return out
}

/**
 * The names the broker speaks itself at the app's callback: its failure parameters, the app's own
 * `state`, the one-time `result` code, the OpenID verdict and a key it made. A provider field of
 * exactly one of these names is never delivered (token-answer.ts), nor a look-alike of one (below).
 */
export const BROKER_SPOKEN = [
  'state',
  'error',
  'error_description',
  'error_uri',
  'broker_error',
  'result',
  'id_token_verified',
  'dpop_jwk',
] as const

/**
 * Every name the broker itself puts in a delivery: the token answer's standard fields, OAuth 1.0a's
 * token pair, the names it speaks (BROKER_SPOKEN), and what it adds (client_id, profile, resource).
 */
export const DELIVERED_BY_BROKER: ReadonlySet<string> = new Set([
  ...['access_token', 'refresh_token', 'expires_in', 'token_type', 'scope', 'id_token', 'access_secret'],
  ...BROKER_SPOKEN,
  ...['client_id', 'profile', 'resource'],
])

/**
 * True when an app could read `name` as one of `names` without it being exactly that name: such a field
 * from the front channel or a provider must never be delivered (`__proto__` neither, it would set a prototype).
 */
export function looksLike(name: string, names: ReadonlySet<string> = DELIVERED_BY_BROKER): boolean {
  if (name === '__proto__') return true
  if (names.has(name)) return false
  for (const r of readings(name)) if (names.has(r)) return true
  return false
}
