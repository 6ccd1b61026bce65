import { describe, expect, it } from 'vitest'
import { dechunk, serviceAnswer } from './upstream.js'

describe('what answers a proxied request', () => {
  it('dechunks a chunked body as nginx reads it; a badly framed one is undefined', () => {
    expect(dechunk('3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n')).toBe('abcde')
    expect(dechunk('zz\r\nabc')).toBeUndefined()
    expect(dechunk('3\r\nabc')).toBeUndefined()
  })

  it("answers the mock upstream with Kong's proxy headers; another service is a 502 naming it", () => {
    const sent = { method: 'GET', path: '/request', query: '', headers: { Host: 'a.test' }, body: '' }
    const route = { id: 'r' }
    const echo = JSON.parse(
      serviceAnswer({ id: 's', host: '127.0.0.1', port: 15555 }, route, sent, '127.0.0.1', 'a.test', '10.0.0.2').body,
    )
    expect(echo.headers).toMatchObject({
      host: '127.0.0.1:15555',
      'x-real-ip': '10.0.0.2',
      'x-forwarded-host': 'a.test',
    })
    const other = serviceAnswer(
      { id: 's', host: 'api.example', port: 443, protocol: 'https' },
      route,
      sent,
      '',
      'a',
      '',
    )
    expect(other.status).toBe(502)
    expect(other.body).toContain('https://api.example:443 is not emulated')
  })
})
