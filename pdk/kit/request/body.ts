/** Request body reading and decoding (form, JSON, multipart) with Kong's errors. */
import type busboy from 'busboy'
import { createRequire } from 'node:module'
import type { Context } from '../context.js'
import { checkLimit, decodeArgs } from '../private/args.js'
import { values, Values } from '../private/values.js'
import { textOrBytes } from '../private/bytes.js'

export const FORM = 'application/x-www-form-urlencoded'
export const JSON_TYPE = 'application/json'
export const MULTIPART = 'multipart/form-data'

/** get_raw_body: the body, or (nil, err) when it was buffered to disk and may not be read. */
export function rawBody(ctx: Context, maxAllowedFileSize?: number): string | Buffer | Values {
  // nginx's request body, which service.request.set_raw_body replaces (ngx.req.set_body_data), as Kong reads it
  const body = ctx.upstream.body
  if (body.length === 0) return ''
  if (body.length <= ctx.config.client_body_buffer_size) return textOrBytes(body)
  if (maxAllowedFileSize === undefined || maxAllowedFileSize === null || maxAllowedFileSize < 0) {
    return values(
      undefined,
      "request body did not fit into client body buffer, consider raising 'client_body_buffer_size'",
    )
  }
  if (maxAllowedFileSize > 0 && body.length > maxAllowedFileSize) {
    return values(undefined, `request body file too big: ${body.length} > ${maxAllowedFileSize}`)
  }
  return textOrBytes(body)
}

/** get_body: decodes by `mimetype` or the request Content-Type; returns (body, err, mimetype). */
export async function decodeBody(ctx: Context, mimetype?: string, maxArgs?: number, maxFile?: number): Promise<Values> {
  const contentType = mimetype ?? ctx.upstream.headers.get('content-type')
  if (contentType === undefined) return values(undefined, 'missing content type')
  const bare = contentType.toLowerCase().split(';')[0]!
  if (bare.startsWith(FORM)) {
    checkLimit('max_args', maxArgs)
    if (ctx.request.body.length > ctx.config.client_body_buffer_size) {
      return values(undefined, 'request body in temp file not supported', FORM)
    }
    // ngx.req.get_post_args: OpenResty's C routine, whose max counts every part
    const { args } = decodeArgs(ctx.request.body.toString('utf8'), maxArgs ?? ctx.config.lua_max_post_args, 'parts')
    return values(args, undefined, FORM)
  }
  if (bare.startsWith(JSON_TYPE)) {
    const raw = rawBody(ctx, maxFile)
    if (raw instanceof Values) return values(undefined, raw.list[1], JSON_TYPE)
    let json: unknown
    try {
      json = JSON.parse(raw.toString())
    } catch {
      json = undefined
    }
    if (typeof json !== 'object' || json === null) return values(undefined, 'invalid json body', JSON_TYPE)
    return values(json, undefined, JSON_TYPE)
  }
  if (bare.startsWith(MULTIPART)) {
    const raw = rawBody(ctx, maxFile)
    if (raw instanceof Values) return values(undefined, raw.list[1], MULTIPART)
    const parts = await parseMultipart(ctx.request.body, contentType)
    if (!parts) return values(undefined, 'unable to decode multipart body', MULTIPART)
    return values(parts, undefined, MULTIPART)
  }
  return values(undefined, `unsupported content type '${contentType}'`, bare)
}

// busboy is loaded on the first multipart body, which few runs parse.
const loadBusboy = () => createRequire(import.meta.url)('busboy') as typeof busboy

/** Multipart fields (files as their content); repeated names become arrays. */
export function parseMultipart(
  body: Buffer,
  contentType: string,
): Promise<Record<string, string | string[]> | undefined> {
  return new Promise((resolve) => {
    let parser: busboy.Busboy
    try {
      parser = loadBusboy()({ headers: { 'content-type': contentType } })
    } catch {
      resolve(undefined)
      return
    }
    const out: Record<string, string | string[]> = {}
    const put = (name: string, value: string) => {
      const prev = out[name]
      out[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value]
    }
    parser.on('field', (name, value) => put(name, value))
    parser.on('file', (name, stream) => {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => put(name, Buffer.concat(chunks).toString('utf8')))
    })
    parser.on('close', () => resolve(out))
    parser.on('error', () => resolve(undefined))
    parser.end(body)
  })
}
