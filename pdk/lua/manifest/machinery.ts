/** broker's own Lua that is no module a plugin requires: the VM's boot and what the modules above share. */
import type { RuntimeFile } from './types.js'

export const MACHINERY: readonly RuntimeFile[] = [
  { file: 'broker/boot.lua', doc: '`require` through the host, the globals, the entry points the host calls', ops: [] },
  {
    file: 'broker/prelude.lua',
    doc: 'the Lua 5.1 / LuaJIT names and number formatting, before any plugin code',
    ops: [],
  },
  {
    file: 'broker/request.lua',
    doc: 'per-request state; each phase in a coroutine; `kong.ctx.shared` shared with JS plugins',
    ops: ['shared_get', 'shared_set'],
  },
  {
    file: 'broker/schema.lua',
    doc: "a plugin's schema.lua: defaults filled, a config refused with Kong's messages",
    ops: ['ip_parse', 'ip_valid_cidr', 're_check'],
  },
  {
    file: 'broker/select.lua',
    doc: "a plugin's config as Kong reads its row: nulls as nil, vault references resolved (`$refs` kept)",
    ops: [],
  },
  {
    file: 'broker/unsupported.lua',
    doc: 'the call of a module that loads but is not emulated (a `LuaModule` with `onUse`)',
    ops: [],
  },
  { file: 'broker/unwritten.lua', doc: "a fallback's function broker has not written", ops: [] },
  { file: 'broker/input_parts.lua', doc: "what resty.openssl's digest and mac objects share", ops: [] },
  {
    file: 'broker/hmac_object.lua',
    doc: 'the HMAC object resty.openssl.hmac and resty.openssl.mac hand out',
    ops: ['ossl_digest_known', 'ossl_hmac'],
  },
]
