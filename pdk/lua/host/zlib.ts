/** Node's zlib for kong.tools.gzip (ffi-zlib in Kong): whole strings, `[undefined, err]` for what is not gzip. */
import { gunzipSync, gzipSync } from 'node:zlib'
import { bytesOf } from './codec.js'
import type { HostOp } from './types.js'

/** zlib's own words for a stream it cannot read, as ffi-zlib passes them on. */
const zlibMessage = (e: unknown): string => {
  const code = (e as { code?: string }).code
  if (code === 'Z_BUF_ERROR') return 'INFLATE: buffer error'
  if (code === 'Z_DATA_ERROR') return 'INFLATE: data error'
  return `INFLATE: ${(e as Error).message}`
}

export const ZLIB_OPS: Record<string, HostOp> = {
  gzip: (_s, mode, data) => {
    const input = bytesOf(data)
    if (mode === 'deflate') return [gzipSync(input)]
    try {
      return [gunzipSync(input)]
    } catch (e) {
      return [undefined, zlibMessage(e)]
    }
  },
}
