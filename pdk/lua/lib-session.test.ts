import { createDecipheriv, createHash, createHmac, pbkdf2Sync } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { LuaRuntime } from './runtime.js'

// resty.session's sealed cookie (broker/session_codec.lua): its header, seal and MAC as lua-resty-session 4's
// README lays them out, checked against node:crypto doing the README's steps; a change to any byte is refused.
// The request-facing behaviour (cookies, timeouts, remember, storage) is in spec-runner/resty-session.test.ts.
const rt = await LuaRuntime.bare(kitFor({}, 'access'))
afterAll(() => rt.close())
const lua = (code: string) => rt.vm.run(code, '=test')
const one = (code: string) => lua(code)[0]

// a header sealed by the codec: the header and ciphertext base64url, the session id
lua(`codec = require "broker.session_codec"
  function sealed(secret, plaintext, iterations)
    local h = { flags = iterations and codec.FLAG_REMEMBER or 0, sid = string.rep("s", 32), created_at = 1700000000,
      rolling_offset = 30, idling_offset = 0 }
    local bin, ct = codec.seal(codec.ikm_of(secret), h, plaintext, nil, iterations)
    return bin, ct
  end
  function flip(s, i) return s:sub(1, i - 1) .. string.char(s:byte(i) ~ 1) .. s:sub(i + 1) end
  function check(secrets, bin, ct, iterations)
    local ikms = {}
    for i, s in ipairs(secrets) do ikms[i] = codec.ikm_of(s) end
    local h, err = codec.unpack(bin)
    if not h then return nil, err end
    local ikm
    ikm, err = codec.authenticate(ikms, h)
    if not ikm then return nil, err end
    return codec.open(ikm, h, ct, iterations)
  end`)

/** The README's keys: HKDF-SHA256 extract of SHA-256(secret), expanded with "<purpose>:<sid>". */
function keys(secret: string, sid: Buffer, iterations?: number) {
  const ikm = createHash('sha256').update(secret).digest()
  const prk = createHmac('sha256', Buffer.alloc(0)).update(ikm).digest()
  const expand = (info: string, n: number) => {
    const t1 = createHmac('sha256', prk)
      .update(Buffer.concat([Buffer.from(info), sid, Buffer.from([1])]))
      .digest()
    const t2 = createHmac('sha256', prk)
      .update(Buffer.concat([t1, Buffer.from(info), sid, Buffer.from([2])]))
      .digest()
    return Buffer.concat([t1, t2]).subarray(0, n)
  }
  const enc = iterations
    ? pbkdf2Sync(prk, Buffer.concat([Buffer.from('encryption:'), sid]), iterations, 44, 'sha256')
    : expand('encryption:', 44)
  return { aes: enc.subarray(0, 32), iv: enc.subarray(32, 44), mac: expand('authentication:', 32) }
}

describe('resty.session cookie codec', () => {
  it("lays the header out as the README does and seals with AES-256-GCM and HMAC-SHA256 on the README's keys", () => {
    const [bin, ct] = lua(`return sealed("our secret", '{"a":1}')`) as [Uint8Array, Uint8Array]
    const header = Buffer.from(bin)
    expect(header.length).toBe(82)
    expect(one(`return #codec.encode((sealed("our secret", "x")))`)).toBe(110)
    const sid = header.subarray(3, 35)
    expect([header[0], header.readUInt16LE(1), sid.toString()]).toEqual([1, 0, 's'.repeat(32)])
    expect([header.readUIntLE(35, 5), header.readUInt32LE(40), header.readUIntLE(44, 3)]).toEqual([1700000000, 30, 7])
    const k = keys('our secret', sid)
    const d = createDecipheriv('aes-256-gcm', k.aes, k.iv)
    d.setAAD(header.subarray(0, 47))
    d.setAuthTag(header.subarray(47, 63))
    expect(Buffer.concat([d.update(Buffer.from(ct)), d.final()]).toString()).toBe('{"a":1}')
    expect(header.subarray(66, 82)).toEqual(
      createHmac('sha256', k.mac).update(header.subarray(0, 66)).digest().subarray(0, 16),
    )
  })

  it("derives a remember cookie's encryption key with PBKDF2-SHA256", () => {
    const [bin, ct] = lua(`return sealed("our secret", "remembered", 1000)`) as [Uint8Array, Uint8Array]
    const header = Buffer.from(bin)
    expect(header.readUInt16LE(1)).toBe(1)
    const k = keys('our secret', header.subarray(3, 35), 1000)
    const d = createDecipheriv('aes-256-gcm', k.aes, k.iv)
    d.setAAD(header.subarray(0, 47))
    d.setAuthTag(header.subarray(47, 63))
    expect(Buffer.concat([d.update(Buffer.from(ct)), d.final()]).toString()).toBe('remembered')
  })

  it('opens what it sealed, under the secret or one of its fallbacks', () => {
    expect(one(`local bin, ct = sealed("old", "data") return check({ "new", "old" }, bin, ct)`)).toBe('data')
  })

  it('refuses a header with any byte changed, a changed ciphertext, and another secret', () => {
    expect(
      lua(`local bin, ct = sealed("our secret", "data")
        local out = {}
        for _, i in ipairs({ 2, 10, 40, 45, 50, 64, 70 }) do
          local _, err = check({ "our secret" }, flip(bin, i), ct)
          out[#out + 1] = err
        end
        local _, e1 = check({ "our secret" }, bin, flip(ct, 2))
        local _, e2 = check({ "another" }, bin, ct)
        local _, e3 = check({ "our secret" }, flip(bin, 1), ct)
        local _, e4 = check({ "our secret" }, bin:sub(1, 81), ct)
        return table.concat(out, "|"), e1, e2, e3, e4`),
    ).toEqual([
      Array(7).fill('invalid session message authentication code').join('|'),
      'unable to decrypt session data',
      'invalid session message authentication code',
      'invalid session type',
      'invalid session header',
    ])
  })
})

describe('resty.session configuration', () => {
  it("refuses the library's server storages and a bad option with a message naming it", () => {
    expect(
      lua(`local session = require "resty.session"
        local _, e1 = pcall(session.new, { storage = "redis" })
        local _, e2 = pcall(session.new, { cookie_same_site = "lax" })
        local _, e3 = pcall(session.new, { idling_timeout = "900" })
        return e1, e2, e3`),
    ).toEqual([
      expect.stringContaining('storage "redis" is not emulated by broker'),
      expect.stringContaining('invalid cookie_same_site "lax" (Lax, Strict, None or Default)'),
      expect.stringContaining('idling_timeout must be a non-negative number'),
    ])
  })
})
