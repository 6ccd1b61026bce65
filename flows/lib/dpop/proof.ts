import { hash } from 'node:crypto'
import { SignJWT } from 'jose'
import type { FlowContext, HttpAnswer, HttpRequest } from '../../contract.js'
import { randomPool } from '../random.js'
import { ClearingMap } from '../../../util/clearing-map.js'
import type { DpopKey } from './key.js'

/**
 * A DPoP proof (RFC 9449 §4.2) for one request: `typ: dpop+jwt`, the public `jwk`, `htm`, `htu`
 * without query and fragment, `iat`, a fresh `jti`, and the server's `nonce` and the token's `ath` when given.
 */
export function dpopProof(
  k: DpopKey,
  htm: string,
  url: string,
  opts: { nonce?: string; accessToken?: string } = {},
): Promise<string> {
  const htu = new URL(url)
  htu.search = ''
  htu.hash = ''
  const claims: Record<string, string> = { htm: htm.toUpperCase(), htu: htu.href }
  if (opts.nonce) claims.nonce = opts.nonce
  if (opts.accessToken) claims.ath = hash('sha256', opts.accessToken, 'base64url')
  return new SignJWT(claims)
    .setProtectedHeader({ alg: k.alg, typ: 'dpop+jwt', jwk: k.jwk })
    .setIssuedAt()
    .setJti(randomPool(24).toString('base64url'))
    .sign(k.key)
}

// The newest nonce each server gave (RFC 9449 §8), by origin, for the next request there. Bounded:
// the map starts over when full. Per process: a nonce another instance missed costs it one retry.
const MAX_SERVERS = 256
const nonces = new ClearingMap<string, string>(MAX_SERVERS)

/** The nonce remembered for `url`'s server. */
export const rememberedNonce = (url: string): string | undefined => nonces.get(new URL(url).origin)

function remember(url: string, answer: HttpAnswer): void {
  const nonce = answer.headers['dpop-nonce']
  if (!nonce || nonce.length > 512) return
  nonces.set(new URL(url).origin, nonce)
}

/** Whether the server refused the proof for want of a nonce it has just given (RFC 9449 §8, §9). */
function wantsNonce(answer: HttpAnswer): boolean {
  if (answer.status !== 400 && answer.status !== 401) return false
  if (!answer.headers['dpop-nonce']) return false
  if (/error="?use_dpop_nonce/.test(answer.headers['www-authenticate'] ?? '')) return true
  try {
    return (JSON.parse(answer.body) as { error?: unknown }).error === 'use_dpop_nonce'
  } catch {
    return false
  }
}

/**
 * Sends the request `build` makes to `url`, with a DPoP proof when the flow has a key; a refusal
 * with `use_dpop_nonce` is answered by one retry carrying the server's nonce. `build` runs again for
 * the retry: a client assertion is single use too.
 */
export async function sendWithDpop(
  ctx: Pick<FlowContext, 'http'>,
  url: string,
  build: () => Promise<HttpRequest>,
  key: DpopKey | undefined,
  accessToken?: string,
): Promise<HttpAnswer> {
  if (!key) return ctx.http(url, await build())
  const attempt = async (): Promise<HttpAnswer> => {
    const request = await build()
    const proof = await dpopProof(key, request.method ?? 'GET', url, { nonce: rememberedNonce(url), accessToken })
    const answer = await ctx.http(url, { ...request, headers: { ...request.headers, dpop: proof } })
    remember(url, answer)
    return answer
  }
  const first = await attempt()
  return wantsNonce(first) ? attempt() : first
}
