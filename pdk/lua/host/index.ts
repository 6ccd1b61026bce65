/**
 * `__host(op, ...)`: what broker's Lua modules (ngx, cjson, resty.*) need from JS: digests,
 * signatures and keys (resty.openssl), URLs (resty.ada), base64, JSON, regular expressions, time, and the request state
 * behind ngx.var / ngx.req, outbound HTTP answered from the fixture (resty.http).
 */
import type { KitBridge } from '../bridge.js'
import { wallClock, type Clock } from '../../kit/private/clock.js'
import { ADA_OPS } from './ada.js'
import { BN_OPS } from './bn.js'
import { CIPHER_OPS } from './cipher.js'
import { CODEC_OPS } from './codec.js'
import { FFI_OPS } from './ffi.js'
import { FS_OPS } from './fs.js'
import { FS_WRITE_OPS } from './fs-write.js'
import { HTTP_OPS } from './http.js'
import { NGX_OPS } from './ngx.js'
import { NGX_CTX_OPS } from './ngx-ctx.js'
import { OPENSSL_OPS } from './openssl.js'
import { OUTPUT_OPS } from './output.js'
import { RE_OPS } from './re.js'
import type { HostOp, HostState } from './types.js'
import { VAR_OPS } from './vars.js'
import { X509_OPS } from './x509.js'
import { ZLIB_OPS } from './zlib.js'

/** Every host operation by name, as Lua calls them (`__host(name, ...)`); ../manifest/ says which module calls which. */
export const OPS: Record<string, HostOp> = {
  ...CODEC_OPS,
  ...RE_OPS,
  ...NGX_OPS,
  ...OPENSSL_OPS,
  ...ADA_OPS,
  ...HTTP_OPS,
  ...ZLIB_OPS,
  ...NGX_CTX_OPS,
  ...OUTPUT_OPS,
  ...CIPHER_OPS,
  ...FS_OPS,
  ...FS_WRITE_OPS,
  ...FFI_OPS,
  ...VAR_OPS,
  ...BN_OPS,
  ...X509_OPS,
}

/** The host functions of one runtime; `writesFiles` lets its Lua change the host's files (`broker pdk test`). */
export function createHost(
  bridge: KitBridge,
  baseDir?: string,
  clock: Clock = wallClock,
  writesFiles = false,
): HostState {
  const state: HostState = {
    baseDir,
    writesFiles,
    clock,
    ctx: undefined,
    bridge,
    call: (op, ...args) => {
      const fn = typeof op === 'string' && Object.hasOwn(OPS, op) ? OPS[op] : undefined
      if (!fn) throw new Error(`broker: no host operation ${String(op)}`)
      return fn(state, ...args)
    },
    begin(ctx) {
      state.ctx = ctx
    },
  }
  return state
}
