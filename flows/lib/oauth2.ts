import { hash } from 'node:crypto'
import type { FlowContext, FlowRecord } from '../contract.js'
import { endpointRequest } from './client-auth.js'
import { type DpopKey, sendWithDpop } from './dpop/index.js'
import { randomPool } from './random.js'
import { tokenFromAnswer } from './token-answer.js'
import { extraParams } from './urls.js'

// Reading token answers and what of them reaches the app live in token-answer.ts; extraParams in urls.ts.
export { deliverable, parseBody, tokenFromAnswer, TOKEN_FIELDS } from './token-answer.js'
export { extraParams }

/** A PKCE verifier and its S256 challenge (RFC 7636). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomPool(32).toString('base64url')
  return { verifier, challenge: hash('sha256', verifier, 'base64url') }
}

/** Whether the record wants PKCE: on unless it says `pkce: false` (also "false"/"0"/"no" from forms). */
export function wantsPkce(record: Readonly<FlowRecord>): boolean {
  const v = record.pkce
  return !(v === false || (typeof v === 'string' && /^(false|0|no|off)$/i.test(v)))
}

/** Where a token request goes: the endpoint, the client assertion's `aud`, the endpoint's auth methods. */
export interface TokenEndpoint {
  url: string
  audience?: string
  authMethods?: readonly string[]
  /** The flow's DPoP key: every request then carries a proof (RFC 9449). */
  dpop?: DpopKey
}

/**
 * Posts a token request to `access_url` (or the discovered `endpoint`) and returns the token answer.
 * The record's `token_params` go first (the grant's own parameters win), then the client
 * authentication of `client_auth`, as a form or as JSON (`body_format`).
 *
 * Written here rather than with a library's client because providers answer in ways they do
 * not accept: form-encoded bodies (GitHub without an Accept header), errors with status 200, a
 * token under another name (`access_name`); and the broker needs its own timeout and error codes.
 */
export async function requestToken(
  ctx: FlowContext,
  params: Record<string, string>,
  endpoint?: TokenEndpoint,
): Promise<Record<string, unknown>> {
  const r = ctx.record
  const url = endpoint?.url ?? String(r.access_url)
  const build = () =>
    endpointRequest(
      r,
      { ...extraParams(r.token_params), ...params },
      { audience: endpoint?.audience ?? url, supported: endpoint?.authMethods },
    )
  const answer = await sendWithDpop(ctx, url, build, endpoint?.dpop)
  return tokenFromAnswer(answer, typeof r.access_name === 'string' && r.access_name ? r.access_name : 'access_token')
}
