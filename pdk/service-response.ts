/** pdk.service.response: the proxied service's own answer (Kong's kong.service.response). */
import type { Context } from './context.js'
import { checkLimit, decodeArgs } from './args.js'
import type { HeadersTable } from './headers.js'
import { checkPhase, phaseSet } from './phases.js'
import { values, type Values } from './values.js'

const HEADER_BODY_LOG = phaseSet('response', 'header_filter', 'body_filter', 'log')

/** Builds pdk.service.response for a request context. */
export function createServiceResponse(ctx: Context) {
  const service = () => ctx.response.service
  const bodyText = () => {
    if (!ctx.upstream.buffered) throw new Error('service body is only available with buffered proxying (see: kong.service.request.enable_buffering function)')
    return service()?.body.toString('utf8')
  }
  return {
    get_status(): number | undefined {
      checkPhase(ctx, HEADER_BODY_LOG)
      return service()?.status
    },
    get_headers(max_headers?: number): HeadersTable | Values | undefined {
      checkPhase(ctx, HEADER_BODY_LOG)
      checkLimit('max_headers', max_headers)
      const s = service()
      if (!s) return undefined
      const { headers, truncated } = s.headers.table(max_headers ?? ctx.config.lua_max_resp_headers)
      return truncated ? values(headers, 'truncated') : headers
    },
    get_header(name: string): string | undefined {
      checkPhase(ctx, HEADER_BODY_LOG)
      if (typeof name !== 'string') throw new Error('name must be a string')
      return service()?.headers.get(name)
    },
    get_raw_body(): string | undefined {
      checkPhase(ctx, HEADER_BODY_LOG)
      return bodyText()
    },
    get_body(mimetype?: string, max_args?: number): unknown {
      checkPhase(ctx, HEADER_BODY_LOG)
      const body = bodyText() ?? ''
      const type = mimetype ?? service()?.headers.get('content-type') ?? ''
      const bare = type.split(';')[0]!.trim().toLowerCase()
      if (bare === 'application/x-www-form-urlencoded') {
        checkLimit('max_args', max_args)
        return values(decodeArgs(body, max_args ?? ctx.config.lua_max_post_args).args, undefined, bare)
      }
      if (bare === 'application/json') {
        try {
          return values(JSON.parse(body), undefined, bare)
        } catch {
          return values(undefined, 'invalid json body', bare)
        }
      }
      return values(undefined, 'unsupported content type', bare)
    },
  }
}
