import { describe, expect, it } from 'vitest'
import { cjsonEncode } from './codec.js'

describe('cjson.encode byte for byte', () => {
  it('copies the bytes of a string that is not UTF-8, and keeps UTF-8 text as its bytes', () => {
    const text = cjsonEncode({ bin: Buffer.from([0x61, 0xff, 0x00]), utf8: 'é/' }, 0, true)
    expect(Buffer.from(text, 'latin1')).toEqual(
      Buffer.concat([Buffer.from('{"bin":"a'), Buffer.from([0xff]), Buffer.from('\\u0000","utf8":"é\\/"}', 'utf8')]),
    )
  })
})
