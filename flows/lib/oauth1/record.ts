import type { FlowRecord } from '../../contract.js'
import { readPrivateKey, SIGNATURE_METHODS, type SignatureMethod, type Signer } from './sign.js'

/**
 * Rewrites an OAuth 1.0a record: `signature_method` defaults to HMAC-SHA1 and `HMAC_SHA1` means
 * `HMAC-SHA1` (Guardian accepted both); a PEM pasted with literal `\n` gets its line breaks back;
 * `access_token`/`access_secret`, as the 3-legged flow delivers them, stand for the stored token.
 */
export function normalizeOAuth1(record: FlowRecord): FlowRecord {
  const out: FlowRecord = { ...record }
  out.signature_method =
    out.signature_method === undefined
      ? 'HMAC-SHA1'
      : String(out.signature_method).trim().toUpperCase().replace(/_/g, '-')
  if (typeof out.private_key === 'string' && !out.private_key.includes('\n') && out.private_key.includes('\\n')) {
    out.private_key = out.private_key.replace(/\\n/g, '\n')
  }
  if (out.oauth_token === undefined && out.access_token !== undefined) out.oauth_token = out.access_token
  if (out.oauth_token_secret === undefined && out.access_secret !== undefined)
    out.oauth_token_secret = out.access_secret
  return out
}

/** The checks every OAuth 1.0a record gets at /store: a known method and what that method needs. */
export function validateOAuth1(record: Readonly<FlowRecord>): Record<string, string> {
  const problems: Record<string, string> = {}
  const method = String(record.signature_method)
  if (!(SIGNATURE_METHODS as readonly string[]).includes(method)) {
    problems.signature_method = `must be one of ${SIGNATURE_METHODS.join(', ')} (got "${method.slice(0, 32)}")`
  } else if (method === 'RSA-SHA1') {
    // Read the key now, so a bad one is a 400 here rather than a failure at /start.
    if (record.private_key === undefined) problems.private_key = 'is required for RSA-SHA1 (a PEM private key)'
    else {
      try {
        readPrivateKey(String(record.private_key))
      } catch (err) {
        problems.private_key = (err as Error).message
      }
    }
  } else if (record.consumer_secret === undefined) {
    problems.consumer_secret = `is required for ${method}`
  }
  if (record.oauth_token_secret !== undefined && record.oauth_token === undefined)
    problems.oauth_token = 'is required with oauth_token_secret'
  return problems
}

/** The consumer of a record as a signer, optionally with a token (the stored one when not given). */
export function signerOf(record: Readonly<FlowRecord>, token?: { key: string; secret?: string }): Signer {
  const stored =
    record.oauth_token === undefined
      ? undefined
      : { key: String(record.oauth_token), secret: optional(record.oauth_token_secret) }
  return {
    consumerKey: String(record.consumer_key),
    consumerSecret: optional(record.consumer_secret),
    signatureMethod: String(record.signature_method ?? 'HMAC-SHA1') as SignatureMethod,
    privateKey: optional(record.private_key),
    token: token ?? stored,
    realm: optional(record.realm),
  }
}

const optional = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : String(v))
