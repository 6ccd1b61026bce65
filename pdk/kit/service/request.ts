/** pdk.service.request: change the request sent to the upstream (Kong's kong.service.request). */
import type { Context } from '../context.js'
import { encodeArgs } from '../private/args.js'
import { normalizeHeader, validateHeader, validateHeaders } from '../private/checks.js'
import { checkPhase, phaseRule, phaseSet } from '../private/phases.js'
import { setUpstreamHost, setUpstreamPath, setUpstreamQuery, setUpstreamScheme } from '../private/upstream.js'
import { luaJson, luaType, values, type Values } from '../private/values.js'
import { isStringOrBytes } from '../private/bytes.js'

const REWRITE_ACCESS = phaseRule(phaseSet('rewrite', 'access'))
const REWRITE_ACCESS_BALANCER = phaseRule(phaseSet('rewrite', 'access', 'balancer'))
const PREREAD_BALANCER = phaseRule(phaseSet('preread', 'balancer'))
const METHODS = new Set([
  'GET',
  'HEAD',
  'PUT',
  'POST',
  'DELETE',
  'OPTIONS',
  'MKCOL',
  'COPY',
  'MOVE',
  'PROPFIND',
  'PROPPATCH',
  'LOCK',
  'UNLOCK',
  'PATCH',
  'TRACE',
])

// Kong's kong.tools.uri escape: every byte outside this set becomes %XX (uppercase hex)
const ESCAPE = /[^!#$&'()*+,/:;=?@[\]A-Za-z0-9\-_.~%]/gu
const percent = (c: string): string => {
  let out = ''
  for (const b of Buffer.from(c, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`
  return out
}

/** Escapes a path as Kong's set_path does (non-ASCII as UTF-8 bytes, never a "URI malformed" error). */
export const escapePath = (path: string): string => path.replace(ESCAPE, percent)

/** Builds pdk.service.request for a request context. */
export function createServiceRequest(ctx: Context) {
  const up = ctx.upstream
  const encodeBody = (args: Record<string, unknown>, mime: string): [string, string] => {
    const bare = mime.split(';')[0]!.trim()
    if (bare === 'application/x-www-form-urlencoded') return [encodeArgs(args), mime]
    if (bare === 'application/json') return [luaJson(args), mime]
    if (bare === 'multipart/form-data') {
      const m = /boundary="?([^";]+)"?/.exec(mime)
      const boundary = m?.[1] ?? String(Math.floor(Math.random() * 1e10))
      let out = ''
      for (const k of Object.keys(args).sort()) {
        const v = args[k]
        if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
          throw new Error(`invalid value "${k}": got ${luaType(v)}, expected string, number or boolean`)
        }
        out += `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${String(v)}\r\n`
      }
      return [out + `--${boundary}--\r\n`, `multipart/form-data; boundary=${boundary}`]
    }
    throw new Error(`unsupported content type ${mime}`)
  }
  // Kong sets ngx.var.upstream_host, which nginx sends as the one Host header
  const setHost = (value: unknown): void => {
    const v = normalizeHeader(value)
    setUpstreamHost(ctx, Array.isArray(v) ? v[v.length - 1]! : v)
  }
  return {
    enable_buffering(): void {
      checkPhase(ctx, REWRITE_ACCESS_BALANCER)
      up.buffered = true
    },
    set_scheme(scheme: string): void {
      checkPhase(ctx, REWRITE_ACCESS_BALANCER)
      if (typeof scheme !== 'string') throw new Error('scheme must be a string')
      if (scheme !== 'http' && scheme !== 'https') throw new Error(`invalid scheme: ${scheme}`)
      setUpstreamScheme(ctx, scheme)
    },
    set_path(path: string): void {
      checkPhase(ctx, REWRITE_ACCESS_BALANCER)
      if (typeof path !== 'string') throw new Error('path must be a string')
      if (!path.startsWith('/')) throw new Error('path must start with /')
      setUpstreamPath(ctx, escapePath(path))
    },
    set_raw_query(query: string): void {
      checkPhase(ctx, REWRITE_ACCESS)
      if (typeof query !== 'string') throw new Error('query must be a string')
      setUpstreamQuery(ctx, query)
    },
    set_method(method: string): void {
      checkPhase(ctx, REWRITE_ACCESS)
      if (typeof method !== 'string') throw new Error('method must be a string')
      if (!METHODS.has(method)) throw new Error(`invalid method: ${method}`)
      up.method = method
    },
    set_query(args: Record<string, unknown>): void {
      checkPhase(ctx, REWRITE_ACCESS)
      if (typeof args !== 'object' || args === null) throw new Error('args must be a table')
      setUpstreamQuery(ctx, encodeArgs(args))
    },
    clear_query_arg(name: string): void {
      checkPhase(ctx, REWRITE_ACCESS)
      if (typeof name !== 'string') throw new Error('query argument name must be a string')
      const query = up.query
        .split('&')
        .filter((p) => p !== '' && decodeURIComponent(p.split('=')[0]!.replace(/\+/g, ' ')) !== name)
        .join('&')
        .replace(/\+/g, '%20')
        // Kong's search_remove leaves the arguments normalized: unreserved characters are not percent-encoded
        .replace(/%([0-9A-Fa-f]{2})/g, (m: string, hex: string) => {
          const c = String.fromCharCode(parseInt(hex, 16))
          return /[A-Za-z0-9\-._~]/.test(c) ? c : m
        })
      setUpstreamQuery(ctx, query)
    },
    set_header(header: string, value: unknown): Values | void {
      checkPhase(ctx, REWRITE_ACCESS_BALANCER)
      validateHeader(header, value)
      if (header.toLowerCase() === ':authority') {
        if (up.scheme !== 'grpc' && up.scheme !== 'grpcs')
          return values(undefined, 'cannot set :authority pseudo-header on non-grpc requests')
      }
      if (header.toLowerCase() === 'host') return setHost(value)
      up.headers.set(header, normalizeHeader(value))
    },
    add_header(header: string, value: unknown): void {
      checkPhase(ctx, REWRITE_ACCESS)
      validateHeader(header, value)
      // the upstream gets one Host header: Kong's add_header("Host") sets ngx.var.upstream_host
      if (header.toLowerCase() === 'host') return setHost(value)
      up.headers.add(header, normalizeHeader(value))
    },
    clear_header(header: string): void {
      checkPhase(ctx, REWRITE_ACCESS)
      if (typeof header !== 'string') throw new Error('header must be a string')
      up.headers.clear(header)
    },
    set_headers(headers: Record<string, unknown>): void {
      checkPhase(ctx, REWRITE_ACCESS)
      if (typeof headers !== 'object' || headers === null) throw new Error('headers must be a table')
      validateHeaders(headers)
      // a Host among them sets ngx.var.upstream_host, as set_header's does
      for (const [k, v] of Object.entries(headers))
        if (k.toLowerCase() === 'host') setHost(v)
        else up.headers.set(k, normalizeHeader(v))
    },
    set_raw_body(body: string | Buffer): void {
      checkPhase(ctx, REWRITE_ACCESS_BALANCER)
      if (!isStringOrBytes(body)) throw new Error('body must be a string')
      up.body = Buffer.from(body)
      up.headers.set('Content-Length', String(up.body.length))
    },
    set_body(args: Record<string, unknown>, mime?: string): true | Values {
      checkPhase(ctx, REWRITE_ACCESS)
      if (typeof args !== 'object' || args === null) throw new Error('args must be a table')
      if (mime !== undefined && mime !== null && typeof mime !== 'string') throw new Error('mime must be a string')
      const type = mime ?? up.headers.get('content-type')
      if (type === undefined)
        return values(undefined, 'content type was neither explicitly given as an argument or received as a header')
      const [body, contentType] = encodeBody(args, type)
      up.body = Buffer.from(body)
      up.headers.set('Content-Type', contentType)
      up.headers.set('Content-Length', String(up.body.length))
      return true
    },
    disable_tls(): true {
      checkPhase(ctx, PREREAD_BALANCER)
      return true
    },
    enable_tls(): true {
      checkPhase(ctx, PREREAD_BALANCER)
      return true
    },
  }
}
