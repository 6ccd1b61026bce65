/** OAuth parameters a walk shows for each hop, in this order. */
export const OAUTH_PARAMS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'oauth_token',
  'oauth_verifier',
  'oauth_callback',
  'oauth_callback_confirmed',
  'code',
  'result',
  'hash',
  'access_token',
  'access_secret',
  'refresh_token',
  'id_token',
  'token_type',
  'expires_in',
  'error',
  'error_description',
] as const

// Values that grant something: never shown whole.
const CREDENTIAL = /^(code|result|hash|oauth_token|oauth_verifier|access_token|access_secret|refresh_token|id_token)$/
/** Whether a parameter's value grants something (a code, token or secret), so is never shown whole. */
export const isCredential = (name: string): boolean => CREDENTIAL.test(name)

// Values that are only long.
const LONG = /^(state|code_challenge|redirect_uri|oauth_callback)$/

/** A code or token cut to its ends (`abcd…wxyz`, 4 characters each side) so it can be told apart, not used. */
export function shorten(value: string, keep = 4): string {
  if (value.length <= keep * 2 + 2) return value.length > 4 ? `${value.slice(0, 2)}…` : '…'
  return `${value.slice(0, keep)}…${value.slice(-keep)}`
}

/** The OAuth parameters of a URL's query and fragment, decoded; codes and tokens shortened. */
export function oauthParams(url: string): Record<string, string> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return {}
  }
  const found = new URLSearchParams(parsed.search)
  // Implicit-style answers put tokens in the fragment.
  for (const [k, v] of new URLSearchParams(parsed.hash.replace(/^#/, ''))) if (!found.has(k)) found.set(k, v)
  const out: Record<string, string> = {}
  for (const name of OAUTH_PARAMS) {
    const value = found.get(name)
    if (value === null) continue
    out[name] = CREDENTIAL.test(name)
      ? shorten(value)
      : LONG.test(name) && value.length > 60 && name !== 'redirect_uri'
        ? shorten(value, 12)
        : value
  }
  return out
}

/** A URL with the values of credential parameters shortened, for display. */
export function displayUrl(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return url
  }
  for (const [k, v] of [...parsed.searchParams]) {
    if (CREDENTIAL.test(k)) parsed.searchParams.set(k, shorten(v))
    else if (k === 'state' && v.length > 60) parsed.searchParams.set(k, shorten(v, 12))
  }
  if (parsed.hash) {
    const frag = new URLSearchParams(parsed.hash.slice(1))
    for (const [k, v] of [...frag]) if (CREDENTIAL.test(k)) frag.set(k, shorten(v))
    parsed.hash = frag.toString()
  }
  // Keep the ellipsis readable rather than percent-encoded.
  return parsed.toString().replace(/%E2%80%A6/g, '…')
}
