import { createHmac, createPrivateKey, createSign, type KeyObject, randomBytes } from 'node:crypto'
import OAuth from 'oauth-1.0a'

/** The signature methods the broker signs with; HMAC-SHA1 is the default (RFC 5849 §3.4). */
export const SIGNATURE_METHODS = ['HMAC-SHA1', 'HMAC-SHA256', 'RSA-SHA1', 'PLAINTEXT'] as const
export type SignatureMethod = (typeof SIGNATURE_METHODS)[number]

/** One request parameter; a list of pairs, because a name may repeat (`a=1&a=2`). */
export type Param = readonly [name: string, value: string]

/** Who signs: the consumer, its method, and the token when there is one. */
export interface Signer {
  consumerKey: string
  consumerSecret?: string
  signatureMethod: SignatureMethod
  /** PEM private key, for RSA-SHA1. */
  privateKey?: string | KeyObject
  token?: { key: string; secret?: string }
  /** `realm` of the Authorization header; never part of the signature (§3.4.1.3.1). */
  realm?: string
}

/** What is signed. `params` are the form-body parameters (and any extra ones); the query is read from `url`. */
export interface SignRequest {
  method: string
  url: string
  params?: readonly Param[]
  /** Protocol parameters besides the usual ones: `oauth_callback`, `oauth_verifier`. */
  oauth?: Record<string, string>
  /** Fixed for test vectors; fresh otherwise. */
  nonce?: string
  timestamp?: number
  /** `oauth_version`; null leaves it out (it is optional, §3.1). */
  version?: string | null
}

export interface Signed {
  /** The Authorization header value, `OAuth oauth_consumer_key="…", …`. */
  header: string
  /** Every protocol parameter sent, `oauth_signature` included. */
  oauth: Record<string, string>
  baseString: string
}

/**
 * Signs a request with the oauth-1.0a package.
 *
 * The package builds the base string from the URL as given and merges same-named parameters, so
 * it gets a normalized base URI (§3.4.1.2: scheme and host lowercased, default port dropped, no
 * query) and every parameter (§3.4.1.3: query, form body, protocol) as data, repeats as arrays.
 */
export function signRequest(signer: Signer, req: SignRequest): Signed {
  const oauth = new OAuth({
    consumer: { key: signer.consumerKey, secret: signer.consumerSecret ?? '' },
    signature_method: signer.signatureMethod,
    hash_function: hashFunction(signer),
    realm: signer.realm,
  })
  const protocol: Record<string, string> = {
    oauth_consumer_key: signer.consumerKey,
    oauth_nonce: req.nonce ?? randomBytes(16).toString('hex'),
    oauth_signature_method: signer.signatureMethod,
    oauth_timestamp: String(req.timestamp ?? oauth.getTimeStamp()),
    ...(req.version === null ? {} : { oauth_version: req.version ?? '1.0' }),
    ...(signer.token?.key ? { oauth_token: signer.token.key } : {}),
    ...req.oauth,
  }
  const request = {
    method: req.method.toUpperCase(),
    url: baseUri(req.url),
    data: paramData([...queryParams(req.url), ...(req.params ?? [])], protocol),
  }
  // The package merges request data into the object it is given: hand it a copy.
  const data = { ...protocol } as unknown as OAuth.Data
  const baseString = oauth.getBaseString(request, { ...data })
  const signature = oauth.getSignature(request, signer.token?.secret, { ...data })
  const signed = { ...protocol, oauth_signature: signature }
  return { header: oauth.toHeader(signed as unknown as OAuth.Authorization).Authorization, oauth: signed, baseString }
}

/** The base string URI of §3.4.1.2. */
export function baseUri(url: string): string {
  const u = new URL(url)
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TypeError(`not an http(s) URL: ${u.protocol}`)
  // WHATWG URL lowercases scheme and host and drops the scheme's default port already.
  return `${u.protocol}//${u.host}${u.pathname}`
}

/** The query of `url` as parameters, decoded as a form (`+` is a space, §3.4.1.3.1). */
export function queryParams(url: string): Param[] {
  return [...new URL(url).searchParams]
}

/** A form-encoded body as parameters. */
export function formParams(body: string): Param[] {
  return [...new URLSearchParams(body)]
}

/**
 * Whether a body's parameters belong in the signature: only a single-part form body (§3.4.1.3.1),
 * never JSON. Without a content type, a body that has the shape of a form counts as one.
 */
export function isFormBody(body: string, contentType?: string): boolean {
  if (contentType) return contentType.toLowerCase().split(';')[0]!.trim() === 'application/x-www-form-urlencoded'
  return /^[^\s=&<>{}[\]"]+(=[^\s&<>"]*)?(&[^\s=&<>{}[\]"]+(=[^\s&<>"]*)?)*$/.test(body.trim())
}

/** RFC 3986 percent-encoding with uppercase hex, as §3.6 wants. */
export const percentEncode = (s: string): string =>
  encodeURIComponent(s).replace(/[!*'()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

// Parameters as the package wants them: one key each, repeats as an array. A name that is also a
// protocol parameter keeps the protocol value too, since the package lets data overwrite it.
function paramData(params: readonly Param[], protocol: Record<string, string>): Record<string, string | string[]> {
  const grouped = new Map<string, string[]>()
  for (const [k, v] of params) grouped.set(k, [...(grouped.get(k) ?? (k in protocol ? [protocol[k]!] : [])), v])
  const data: Record<string, string | string[]> = {}
  for (const [k, values] of grouped)
    Object.defineProperty(data, k, {
      value: values.length === 1 ? values[0]! : values,
      enumerable: true,
      writable: true,
    })
  return data
}

function hashFunction(signer: Signer): (base: string, key: string) => string {
  switch (signer.signatureMethod) {
    case 'PLAINTEXT':
      return (_base, key) => key
    case 'HMAC-SHA1':
      return (base, key) => createHmac('sha1', key).update(base).digest('base64')
    case 'HMAC-SHA256':
      return (base, key) => createHmac('sha256', key).update(base).digest('base64')
    case 'RSA-SHA1': {
      const key = readPrivateKey(signer.privateKey)
      return (base) => createSign('RSA-SHA1').update(base).sign(key, 'base64')
    }
  }
}

/** The RSA private key of a PEM text; throws a message that never repeats the key. */
export function readPrivateKey(pem: string | KeyObject | undefined): KeyObject {
  if (pem && typeof pem === 'object') return pem
  let key: KeyObject
  try {
    key = createPrivateKey({ key: String(pem ?? ''), format: 'pem' })
  } catch {
    throw new TypeError('is not a readable PEM private key')
  }
  if (key.asymmetricKeyType !== 'rsa')
    throw new TypeError(`is a ${key.asymmetricKeyType} key; RSA-SHA1 needs an RSA key`)
  return key
}
