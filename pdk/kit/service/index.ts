/** pdk.service: which upstream the request goes to (Kong's kong.service, left out of the reference). */
import type { Context } from '../context.js'
import { checkPhase, phaseRule, phaseSet } from '../private/phases.js'
import { setUpstreamTarget } from '../private/upstream.js'
import { values, type Values } from '../private/values.js'

const TARGET_PHASES = phaseRule(phaseSet('rewrite', 'access', 'balancer', 'preread'))
const ACCESS = phaseRule(phaseSet('access'))

/** Builds pdk.service for a request context. */
export function createService(ctx: Context) {
  return {
    set_upstream(host: string): true | Values {
      checkPhase(ctx, ACCESS)
      if (typeof host !== 'string') throw new Error('host must be a string')
      // Kong looks the name up among the Upstream entities (the fixture's `upstreams`)
      if (!ctx.data.upstreams.some((u) => u.name === host))
        return values(undefined, `could not find an Upstream named '${host}'`)
      setUpstreamTarget(ctx, { host })
      return true
    },
    set_target(host: string, port: number): void {
      checkPhase(ctx, TARGET_PHASES)
      if (typeof host !== 'string') throw new Error('host must be a string')
      if (typeof port !== 'number' || !Number.isInteger(port)) throw new Error('port must be an integer')
      if (port < 0 || port > 65535) throw new Error(`port must be an integer between 0 and 65535: given ${port}`)
      setUpstreamTarget(ctx, { host, port })
    },
    set_retries(retries: number): void {
      checkPhase(ctx, ACCESS)
      if (typeof retries !== 'number' || !Number.isInteger(retries)) throw new Error('retries must be an integer')
      if (retries < 0 || retries > 32767)
        throw new Error(`retries must be an integer between 0 and 32767: given ${retries}`)
    },
    set_timeouts(connect_timeout: number, write_timeout: number, read_timeout: number): void {
      checkPhase(ctx, ACCESS)
      for (const [name, v] of [
        ['connect_timeout', connect_timeout],
        ['write_timeout', write_timeout],
        ['read_timeout', read_timeout],
      ] as const) {
        if (typeof v !== 'number' || !Number.isInteger(v)) throw new Error(`${name} must be an integer`)
        if (v < 1 || v > 2147483646) throw new Error(`${name} must be an integer between 1 and 2147483646: given ${v}`)
      }
    },
    set_tls_verify(on: boolean): true {
      checkPhase(ctx, TARGET_PHASES)
      if (typeof on !== 'boolean') throw new Error('argument must be a boolean')
      return true
    },
    set_tls_verify_depth(depth: number): true {
      checkPhase(ctx, TARGET_PHASES)
      if (typeof depth !== 'number') throw new Error('argument must be a number')
      return true
    },
  }
}
