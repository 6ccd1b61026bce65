import { describe, expect, it } from 'vitest'
import { CODEC_OPS, cjsonDecode, cjsonEncode } from './codec.js'

describe('cjson.encode byte for byte', () => {
  it('copies the bytes of a string that is not UTF-8, and keeps UTF-8 text as its bytes', () => {
    const text = cjsonEncode({ bin: Buffer.from([0x61, 0xff, 0x00]), utf8: 'é/' }, 0, true)
    expect(Buffer.from(text, 'latin1')).toEqual(
      Buffer.concat([Buffer.from('{"bin":"a'), Buffer.from([0xff]), Buffer.from('\\u0000","utf8":"é\\/"}', 'utf8')]),
    )
  })
})

describe('ngx.base64.decode_base64url', () => {
  const decode = (s: string) => CODEC_OPS.decode_base64url!(undefined as never, s)

  it('takes padded input, as nginx does (Kong pads a JWT part before decoding it)', () => {
    expect(decode('YWI=')).toEqual([Buffer.from('ab')])
    expect(decode('YWI')).toEqual([Buffer.from('ab')])
  })

  it('refuses what is not base64url, and a length no encoding gives', () => {
    expect(decode('YW+I')).toEqual([undefined, 'invalid input'])
    expect(decode('YWJjZ')).toEqual([undefined, 'invalid input'])
    expect(decode('Y=WI')).toEqual([undefined, 'invalid input'])
  })
})

describe("cjson.decode's message for bad input", () => {
  it('names where the token lua-cjson could not read starts: a text that does not begin with a value at once', () => {
    expect(() => cjsonDecode('Sure! Here is your response: {\n  "status": 209\n}')).toThrow(
      'Expected value but found invalid token at character 1',
    )
    expect(() => cjsonDecode('  Sure')).toThrow('Expected value but found invalid token at character 3')
    expect(() => cjsonDecode('')).toThrow('Expected value but found end of string at character 1')
    expect(cjsonDecode('{"a": [1, "x\ny"]}')).toEqual({ a: [1, 'x\ny'] })
  })
})
