/** How a record field is asked for and shown: URL fields are validated, secrets are masked. */
export type FieldKind = 'text' | 'url' | 'secret'

export interface RecordField {
  /** The record field, as POST /store takes it. */
  readonly field: string
  /** The `broker store` flag that sets it. */
  readonly flag: string
  readonly kind: FieldKind
  readonly summary: string
  /** Allowed values, when the broker knows only a few. */
  readonly options?: readonly string[]
  /** True or false: its flag is a switch (`--profile`, `--no-profile`), not a flag taking a value. */
  readonly switch?: true
}

const f = (field: string, kind: FieldKind, summary: string, options?: readonly string[]): RecordField => ({
  field,
  flag: field.replace(/_/g, '-'),
  kind,
  summary,
  options,
})

/** Every record field that has its own flag; anything else goes through `--field name=value`. */
export const RECORD_FIELDS: readonly RecordField[] = [
  f('provider', 'text', 'A provider of the catalogue (github, okta, …): fills its URLs; see --list-providers.'),
  f('subdomain', 'text', "Fills [subdomain] in the provider's URLs (okta: acme; keycloak: host/realms/name)."),
  f('client_id', 'text', 'OAuth 2 client id.'),
  f(
    'client_secret',
    'secret',
    'OAuth 2 client secret (prefer the prompt or the keychain: flags end up in shell history).',
  ),
  f('consumer_key', 'text', 'OAuth 1.0a consumer key.'),
  f('consumer_secret', 'secret', 'OAuth 1.0a consumer secret.'),
  f('authorize_url', 'url', "The provider's authorization URL."),
  f('access_url', 'url', "The provider's access (token) URL."),
  f('issuer', 'url', 'An OpenID / OAuth issuer: its metadata fills authorize_url, access_url, jwks_uri and PAR.'),
  f('jwks_uri', 'url', "The provider's JWKS URL, to verify id_tokens when there is no issuer."),
  f(
    'device_authorization_url',
    'url',
    "The provider's device authorization URL (--flow device), unless an issuer gives it.",
  ),
  f('par_url', 'url', "The provider's pushed authorization request URL (with --par), unless an issuer gives it."),
  f('request_url', 'url', "The provider's request token URL (OAuth 1.0a)."),
  f('verify_url', 'url', 'The URL a third party verifies credentials at (OAuth Echo).'),
  f(
    'resource',
    'url',
    'A protected resource (RFC 8707), e.g. an MCP server: named in every request; alone, it discovers the rest (RFC 9728).',
  ),
  f(
    'client_name',
    'text',
    'The name the broker registers its client under when there is no client_id (default broker).',
  ),
  {
    ...f('profile', 'text', "Deliver the user's profile (OpenID userinfo, or profile_url) with the tokens.", [
      'true',
      'false',
    ]),
    switch: true,
  },
  f('profile_url', 'url', "Where the user's profile is, when the issuer metadata has no userinfo_endpoint."),
  f('id_token', 'secret', "With --flow oauth2-refresh: the login's id_token; the refreshed one must be the same user."),
  f('callback', 'url', "Your app's URL that receives the result (or oob)."),
  f('scope', 'text', 'Requested scopes, as the provider writes them.'),
  f('state', 'text', 'Your own state, handed back to your callback.'),
  f('grant_type', 'text', 'OAuth 2 grant for the 2-legged flow (client_credentials, refresh_token, …).'),
  f('refresh_token', 'secret', 'Refresh token for the oauth2-refresh flow.'),
  f('username', 'text', 'Resource owner username (oauth2-password).'),
  f('password', 'secret', 'Resource owner password (oauth2-password).'),
  f('signature_method', 'text', 'OAuth 1.0a signature method.', ['HMAC-SHA1', 'HMAC-SHA256', 'PLAINTEXT', 'RSA-SHA1']),
  f('private_key', 'secret', 'Private key, PEM or JWK: OAuth 1.0a RSA-SHA1, or OAuth 2 private_key_jwt.'),
  f(
    'dpop_key',
    'secret',
    'DPoP private key, JWK or PEM (EC P-256/384/521, RSA, Ed25519): tokens bound to it (RFC 9449).',
  ),
  {
    ...f(
      'dpop',
      'text',
      'Without --dpop-key: the broker makes an ES256 key, binds the tokens to it, delivers it as dpop_jwk.',
      ['true', 'false'],
    ),
    switch: true,
  },
  f('private_key_kid', 'text', 'Key id put in the private_key_jwt assertion header.'),
  f('private_key_alg', 'text', 'Signing algorithm of the private_key_jwt assertion (default: from the key).'),
  f('oauth_token', 'secret', 'OAuth 1.0a token for 1-legged resource requests and Echo.'),
  f('oauth_token_secret', 'secret', 'OAuth 1.0a token secret.'),
  f('access_name', 'text', "Name of the token field in the provider's answer (default access_token)."),
  f('authorize_method', 'text', 'Token type delivered when the provider gives none.', ['Bearer', 'OAuth', 'Digest']),
  f(
    'authorize_params',
    'text',
    'Extra authorization parameters: a query string (prompt=consent&access_type=offline) or JSON ({"prompt":"consent"}).',
  ),
  f('client_auth', 'text', 'How the client authenticates at the token URL (default: client_secret_post).', [
    'client_secret_post',
    'post',
    'client_secret_basic',
    'basic',
    'client_secret_jwt',
    'private_key_jwt',
    'none',
  ]),
  f('body_format', 'text', 'How token, refresh and PAR requests are sent.', ['form', 'json']),
  f('token_params', 'text', 'Extra token request parameters: a query string (resource=…&audience=…) or JSON.'),
  f('delivery', 'text', 'How the result reaches the callback.', ['query', 'form_post', 'code']),
  f('realm', 'text', 'OAuth 1.0a realm.'),
]

/** The field named `name`, or a plain text field when it has no flag of its own. */
export function fieldInfo(name: string): RecordField {
  return (
    RECORD_FIELDS.find((x) => x.field === name) ??
    f(name, /secret|password|token|private_key/i.test(name) ? 'secret' : 'text', name)
  )
}

/** Secret fields kept in the keychain, keyed by the id field beside them. */
export const KEPT_SECRETS = [
  { secret: 'client_secret', id: 'client_id' },
  { secret: 'consumer_secret', id: 'consumer_key' },
] as const

/**
 * The command line with `--profile true` / `--dpop=false` (as these flags were written before they
 * became switches) as `--profile` / `--no-dpop`, so that older scripts keep working.
 */
export function switchValues(argv: readonly string[], switches: readonly string[]): string[] {
  const names = new Set(switches.map((s) => `--${s}`))
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!
    if (token === '--') return [...out, ...argv.slice(i)]
    const [name, value] = token.includes('=')
      ? [token.slice(0, token.indexOf('=')), token.slice(token.indexOf('=') + 1)]
      : [token, undefined]
    const given = value ?? (names.has(name) && /^(true|false)$/.test(argv[i + 1] ?? '') ? argv[++i] : undefined)
    if (!names.has(name) || given === undefined) out.push(token)
    else if (given === 'true') out.push(name)
    else if (given === 'false') out.push(`--no-${name.slice(2)}`)
    else out.push(token)
  }
  return out
}

/** `name=value` pairs of `--field` as an object; a pair without `=` is a usage error for the caller. */
export function parseFieldPairs(pairs: readonly string[]): { fields: Record<string, string>; bad: string[] } {
  const fields: Record<string, string> = {}
  const bad: string[] = []
  for (const pair of pairs) {
    const i = pair.indexOf('=')
    if (i <= 0) bad.push(pair)
    else fields[pair.slice(0, i)] = pair.slice(i + 1)
  }
  return { fields, bad }
}
