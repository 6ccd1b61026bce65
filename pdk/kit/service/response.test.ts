import { describe, expect, it } from 'vitest'
import { HeaderList } from '../private/headers.js'
import { kitFor } from '../../runner/harness.js'
import { toList } from '../private/values.js'

/** A kit in the response phase whose service answered with `body` and `headers`, buffered. */
function answered(body: string, headers: Record<string, string> = {}) {
  const { ctx, kit } = kitFor({}, 'response')
  ctx.upstream.buffered = true
  ctx.response.service = { status: 200, headers: HeaderList.from(headers), body: Buffer.from(body) }
  return kit.service.response as Record<string, (...a: unknown[]) => unknown>
}

describe('service.response.get_body', () => {
  it('fails with "missing content type" when neither a mimetype nor a Content-Type is there', async () => {
    expect(toList(await answered('a=1').get_body!())).toEqual([undefined, 'missing content type'])
  })
  it('names the unsupported content type in quotes and returns the bare type third', async () => {
    expect(toList(await answered('x', { 'Content-Type': 'Text/Plain; charset=utf-8' }).get_body!())).toEqual([
      undefined,
      "unsupported content type 'Text/Plain; charset=utf-8'",
      'text/plain',
    ])
  })
  it('refuses JSON that is not an object or array', async () => {
    expect(toList(await answered('123', { 'Content-Type': 'application/json' }).get_body!())).toEqual([
      undefined,
      'invalid json body',
      'application/json',
    ])
    expect(toList(await answered('{"a":1}', { 'Content-Type': 'application/json' }).get_body!())).toEqual([
      { a: 1 },
      undefined,
      'application/json',
    ])
  })
  it('decodes multipart bodies', async () => {
    const body =
      '--XB\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--XB\r\nContent-Disposition: form-data; name="a"\r\n\r\n2\r\n--XB--\r\n'
    expect(toList(await answered(body, { 'Content-Type': 'multipart/form-data; boundary=XB' }).get_body!())).toEqual([
      { a: ['1', '2'] },
      undefined,
      'multipart/form-data',
    ])
  })
  it('decodes form bodies up to 100 arguments by default', async () => {
    const body = Array.from({ length: 120 }, (_, i) => `k${i}=v`).join('&')
    const [args] = toList(
      await answered(body, { 'Content-Type': 'application/x-www-form-urlencoded' }).get_body!(),
    ) as [Record<string, string>]
    expect(Object.keys(args)).toHaveLength(100)
  })
})

describe('service.response.get_raw_body', () => {
  it('is an empty string when the service sent nothing', () => {
    const { ctx, kit } = kitFor({}, 'log')
    ctx.upstream.buffered = true
    expect(kit.service.response.get_raw_body()).toBe('')
  })
})
