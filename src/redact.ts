import { ClearingMap } from '../util/clearing-map.js'

/**
 * The one list of field names whose values are secrets, shared by /hash-check, the log and error
 * texts: `*secret*`, `*token*`, `*password*` and the names below, in any case, `-` or `_`.
 */
export const SECRET_NAMES: readonly string[] = [
  '*secret*',
  '*token*',
  '*password*',
  'passwd',
  'pass',
  'pwd',
  'private_key',
  'dpop_key',
  'dpop_jwk',
  'device_code',
  '*api_key*',
  '*apikey*',
  'assertion',
  'client_assertion',
  'code_verifier',
  'verifier',
  'oauth_verifier',
  'code',
  'authorization',
  'cookie',
  'set-cookie',
  'session',
  'sig',
  'signature',
]

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const SECRET = new RegExp(
  `^(?:${SECRET_NAMES.map((n) => escape(n).replace(/\\\*/g, '.*').replace(/[-_]/g, '[-_]')).join('|')})$`,
  'i',
)

export const REDACTED = '[redacted]'

// Names the patterns above catch that say how a secret is used, not what it is.
const NOT_SECRET: ReadonlySet<string> = new Set(['token_type', 'token_endpoint_auth_method'])

// Field names repeat from record to record; the pattern (a long alternation) tested per name was
// most of /hash-check's redaction cost. Bounded: the map starts over when full.
const secretNames = new ClearingMap<string, boolean>(1024)

/** Whether a field or parameter of this name holds a secret. */
export function isSecretName(name: string): boolean {
  let secret = secretNames.get(name)
  if (secret === undefined) {
    secret = SECRET.test(name) && !NOT_SECRET.has(name.toLowerCase())
    if (name.length <= 64) secretNames.set(name, secret)
  }
  return secret
}

// user:password@ in a URL, and a query or form parameter with a secret's name.
const USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi
const PARAM = /([?&#;\s]|^)([^=&?#;\s]{1,64})=([^&#\s]*)/g
const JSON_FIELD = /("([^"\\]{1,64})"\s*:\s*)"(?:[^"\\]|\\.)*"/g

/**
 * `text` with URL userinfo and the values of secret-named query parameters replaced, so a URL or an
 * error text can be shown. Text without `@` or `=` is returned as it is, without a regex run.
 */
export function scrubText(text: string): string {
  let out = text
  if (out.includes('@')) out = out.replace(USERINFO, `$1${REDACTED}@`)
  if (out.includes('='))
    out = out.replace(PARAM, (m, sep: string, name: string) => (isSecretName(name) ? `${sep}${name}=${REDACTED}` : m))
  if (out.includes('"'))
    out = out.replace(JSON_FIELD, (m, head: string, name: string) => (isSecretName(name) ? `${head}"${REDACTED}"` : m))
  return out
}

/** Whether a URL carries credentials: userinfo, or a secret-named query parameter. */
export function urlHasCredentials(url: string): boolean {
  return scrubText(url) !== url
}

const MAX_DEPTH = 32

/**
 * A copy of `value` with every secret replaced, at any depth and in arrays: the values of secret
 * names (and of `extra`, a plugin's own), URL userinfo and secret query parameters in any text.
 */
export function redactDeep(value: unknown, extra: readonly string[] = [], depth = 0): unknown {
  if (typeof value === 'string') return scrubText(value)
  if (value === null || typeof value !== 'object') return value
  if (depth >= MAX_DEPTH) return REDACTED
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, extra, depth + 1))
  if (value instanceof Error) {
    // As pino's serializer would print it, with the texts scrubbed: messages may carry URLs.
    const { name, message, stack } = value
    const own = redactDeep({ ...value }, extra, depth + 1) as Record<string, unknown>
    // An error's code (ECONNREFUSED, ERR_…) is what an operator needs, not an OAuth code.
    const code = (value as { code?: unknown }).code
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code)) own.code = code
    return { type: name, message: scrubText(message), stack: stack && scrubText(stack), ...own }
  }
  const proto: unknown = Object.getPrototypeOf(value)
  // Anything but plain data (a request, a socket) is left to the logger's serializers.
  if (proto !== Object.prototype && proto !== null) return value
  const out: Record<string, unknown> = {}
  const source = value as Record<string, unknown>
  for (const k in source) {
    if (!Object.hasOwn(source, k)) continue
    const v = isSecretName(k) || extra.includes(k) ? REDACTED : redactDeep(source[k], extra, depth + 1)
    // A parsed body may hold a "__proto__" key: kept as data, never as the copy's prototype.
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
    else out[k] = v
  }
  return out
}

/** A copy of `record` with every secret value replaced, at any depth, plus the plugin's own secret fields. */
export function redact(
  record: Readonly<Record<string, unknown>>,
  extra: readonly string[] = [],
): Record<string, unknown> {
  return redactDeep(record, extra) as Record<string, unknown>
}

// Control characters (C0, DEL, C1) and the line and paragraph separators.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g
const MAX_TEXT = 300

/**
 * An error text as the app and /hash-check may see it: one line without control characters, URL
 * credentials and secret parameters scrubbed, cut to a few hundred characters.
 */
export function safeText(text: string): string {
  const line = scrubText(text.replace(CONTROL, ' '))
  return line.length > MAX_TEXT ? `${line.slice(0, MAX_TEXT - 1)}…` : line
}
