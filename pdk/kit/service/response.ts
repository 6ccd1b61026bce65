/** pdk.service.response: the proxied service's own answer (Kong's kong.service.response). */
import type { Context } from '../context.js'
import { checkLimit, decodeArgs } from '../private/args.js'
import type { HeadersTable } from '../private/headers.js'
import { checkPhase, phaseRule, phaseSet } from '../private/phases.js'
import { FORM, JSON_TYPE, MULTIPART, parseMultipart } from '../request/body.js'
import { values, type Values } from '../private/values.js'
import { textOrBytes } from '../private/bytes.js'

const HEADER_BODY_LOG = phaseRule(phaseSet('response', 'header_filter', 'body_filter', 'log'))

/** Builds pdk.service.response for a request context. */
export function createServiceResponse(ctx: Context) {
  const service = () => ctx.response.service
  const bodyBytes = () => {
    if (!ctx.upstream.buffered)
      throw new Error(
        'service body is only available with buffered proxying (see: kong.service.request.enable_buffering function)',
      )
    return service()?.body
  }
  const bodyText = () => bodyBytes()?.toString('utf8')
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
      // Kong reads get_headers(), so only the first lua_max_resp_headers headers are seen
      return service()?.headers.getLimited(name, ctx.config.lua_max_resp_headers)
    },
    get_raw_body(): string | Buffer {
      checkPhase(ctx, HEADER_BODY_LOG)
      const bytes = bodyBytes()
      return bytes ? textOrBytes(bytes) : ''
    },
    /** The service's body decoded by `mimetype` or its Content-Type: (body, err, mimetype), as Kong. */
    async get_body(mimetype?: string | null, max_args?: number | null): Promise<Values> {
      checkPhase(ctx, HEADER_BODY_LOG)
      const body = bodyText() ?? ''
      const type = mimetype ?? service()?.headers.get('content-type')
      if (type === undefined) return values(undefined, 'missing content type')
      const bare = type.toLowerCase().split(';')[0]!
      if (bare.startsWith(FORM)) {
        checkLimit('max_args', max_args)
        // Kong's own default here, not lua_max_post_args; ngx.decode_args, whose max counts every part
        return values(decodeArgs(body, max_args ?? 100, 'parts').args, undefined, FORM)
      }
      if (bare.startsWith(JSON_TYPE)) {
        let json: unknown
        try {
          json = JSON.parse(body)
        } catch {
          json = undefined
        }
        if (typeof json !== 'object' || json === null) return values(undefined, 'invalid json body', JSON_TYPE)
        return values(json, undefined, JSON_TYPE)
      }
      if (bare.startsWith(MULTIPART)) {
        const parts = await parseMultipart(Buffer.from(body), type)
        if (!parts) return values(undefined, 'unable to decode multipart body', MULTIPART)
        return values(parts, undefined, MULTIPART)
      }
      return values(undefined, `unsupported content type '${type}'`, bare)
    },
  }
}
