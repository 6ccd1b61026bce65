/** Record fields holding extra request parameters: an object, JSON text of one, or a query string. */
export const PARAMS_FIELDS = ['authorize_params', 'token_params'] as const

const PROBLEM = 'must be an object of text values, its JSON text, or a query string (name=value&…)'

/**
 * A params field as the flows read it: JSON text (`{"prompt":"consent"}`, as a shell passes it to
 * --authorize-params) becomes the object it spells, so it is not sent as one odd parameter name
 * (`%7B%22prompt…%22%7D=`); an object or a query string stays as it is. `problem` says what is wrong.
 */
export function normalizeParams(value: unknown): { value: unknown } | { problem: string } {
  const parsed = parseParams(value)
  if ('problem' in parsed) return parsed
  const names =
    typeof parsed.value === 'string'
      ? [...new URLSearchParams(parsed.value).keys()]
      : Object.keys(parsed.value as object)
  const auth = names.find((n) => CLIENT_AUTH.has(n))
  // The client authenticates as the record says (client_id, client_secret, client_auth): a parameter that
  // does it too could make a shared registered client fail (invalid_client drops it) or mix two clients.
  if (auth !== undefined)
    return {
      problem: `may not carry ${auth}: client authentication comes from the record's client_id, client_secret, private_key and client_auth`,
    }
  return parsed
}

/** Parameters that authenticate the client (RFC 6749 §2.3, RFC 7523 §2.2): never extra parameters. */
const CLIENT_AUTH = new Set(['client_id', 'client_secret', 'client_assertion', 'client_assertion_type'])

function parseParams(value: unknown): { value: unknown } | { problem: string } {
  if (typeof value === 'string') {
    const text = value.trim()
    if (text.startsWith('{') || text.startsWith('[')) {
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch {
        return { problem: `is not valid JSON; it ${PROBLEM}` }
      }
      return flatObject(parsed) ? { value: parsed } : { problem: PROBLEM }
    }
    // Each part a name=value pair: a bare word is more likely a mistake than a parameter without a value.
    const parts = text.split('&').filter(Boolean)
    return parts.every((p) => /^[^=]+=/.test(p)) ? { value } : { problem: PROBLEM }
  }
  return flatObject(value) ? { value } : { problem: PROBLEM }
}

const flatObject = (v: unknown): v is Record<string, string | number | boolean> =>
  !!v &&
  typeof v === 'object' &&
  !Array.isArray(v) &&
  Object.values(v).every((x) => ['string', 'number', 'boolean'].includes(typeof x))
