/**
 * ngx.print / say / flush / eof / send_headers in rewrite and access (and the Admin API's handlers, which
 * run in content_by_lua), as OpenResty writes the answer from there: the first output sends the headers
 * (ngx.status, ngx.header) and the request is answered by the plugin, not proxied; the body is what was
 * printed; after eof nothing more is written.
 */
import type { Context } from '../../kit/context.js'
import { bytesOf } from './codec.js'
import type { HostOp, HostState } from './types.js'

const OUTPUT_PHASES = new Set(['rewrite', 'access', 'admin_api'])
const state = new WeakMap<Context, { eof: boolean }>()

const need = (s: HostState): Context => {
  if (!s.ctx) throw new Error('API disabled in the current context')
  const ctx = s.ctx
  // OpenResty's words for an output call outside the content-producing phases
  if (!OUTPUT_PHASES.has(ctx.phase)) throw new Error(`API disabled in the context of ${ctx.phase}_by_lua*`)
  return ctx
}

/** Sends the headers once: the answer is the plugin's from here on. */
function send(ctx: Context): { eof: boolean } {
  let st = state.get(ctx)
  if (!st) {
    state.set(ctx, (st = { eof: false }))
    ctx.response.exited = true
    ctx.response.body = Buffer.alloc(0)
  }
  return st
}

const record = (s: HostState, call: string, args: unknown[]): void => s.bridge.record?.({ call, args, returns: [1] })

export const OUTPUT_OPS: Record<string, HostOp> = {
  ngx_print: (s, data, as) => {
    const ctx = need(s)
    const st = send(ctx)
    if (st.eof) return [undefined, 'seen eof']
    const bytes = bytesOf(data)
    ctx.response.body = Buffer.concat([ctx.response.body ?? Buffer.alloc(0), bytes])
    record(s, String(as), [data])
    return [1]
  },
  ngx_send_headers: (s) => {
    send(need(s))
    return [1]
  },
  ngx_eof: (s) => {
    const st = send(need(s))
    st.eof = true
    record(s, 'ngx.eof', [])
    return [1]
  },
  ngx_flush: (s) => {
    need(s)
    return [1]
  },
  /** Whether the headers went out (ngx.headers_sent); ngx.exit then only ends the phase. */
  ngx_headers_sent: (s) => [s.ctx !== undefined && state.has(s.ctx)],
  ngx_end_phase: (s) => {
    if (s.ctx) s.ctx.phaseEnded = true
    return []
  },
}
