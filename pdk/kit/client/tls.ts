/** pdk.client.tls: client certificates on TLS connections (mutual TLS). */
import type { Context } from '../context.js'
import { checkPhase, phaseRule, phaseSet } from '../private/phases.js'
import { values, type Values } from '../private/values.js'

const CERTIFICATE = phaseRule(phaseSet('certificate'))
// Kong's REWRITE_AND_LATER and REWRITE_BEFORE_LOG (client/tls.lua); the reference's lists under --strict
const CHAIN_PHASES = phaseRule(
  phaseSet('rewrite', 'access', 'response', 'balancer', 'log'),
  phaseSet('rewrite', 'access', 'balancer', 'header_filter', 'body_filter', 'log'),
)
const VERIFY_PHASES = phaseRule(
  phaseSet('rewrite', 'access', 'response', 'balancer'),
  phaseSet('rewrite', 'access', 'balancer'),
)

const isTls = (ctx: Context) => ctx.request.scheme === 'https' || ctx.request.scheme === 'tls'

/** Builds pdk.client.tls for a request context. */
export function createClientTls(ctx: Context) {
  return {
    request_client_certificate(ca_certs?: unknown): true | Values {
      checkPhase(ctx, CERTIFICATE)
      if (!isTls(ctx)) return values(undefined, 'no SSL connection')
      ctx.tls.certificateRequested = true
      ctx.tls.caHints = ca_certs !== undefined && ca_certs !== null
      return true
    },
    disable_session_reuse(): true | Values {
      checkPhase(ctx, CERTIFICATE)
      if (!isTls(ctx)) return values(undefined, 'no SSL connection')
      ctx.tls.sessionReuseDisabled = true
      return true
    },
    get_full_client_certificate_chain(): string | Values | undefined {
      checkPhase(ctx, CHAIN_PHASES)
      if (!isTls(ctx)) return values(undefined, 'connection is not TLS or TLS support for Nginx is not compiled in')
      // without a request in the certificate phase the client sends nothing
      if (!ctx.tls.certificateRequested || !ctx.request.tlsChain) return undefined
      return ctx.request.tlsChain
    },
    set_client_verify(v: string): void {
      checkPhase(ctx, VERIFY_PHASES)
      if (typeof v !== 'string') throw new Error('assertion failed!')
      if (v !== 'SUCCESS' && v !== 'NONE' && !v.startsWith('FAILED:')) {
        throw new Error(`unknown client verify value: ${v} accepted values are: "SUCCESS", "NONE" or "FAILED:<reason>"`)
      }
      ctx.tls.verifyOverride = v
    },
  }
}
