import { describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'

describe('webserver.get_var', () => {
  it('names the protocol as nginx does ($server_protocol)', () => {
    const proto = (http_version: 1 | 1.1 | 2 | 3) =>
      kitFor({ request: { url: 'http://h/', http_version } }).kit.webserver.get_var('server_protocol')
    expect(proto(1)).toBe('HTTP/1.0')
    expect(proto(1.1)).toBe('HTTP/1.1')
    expect(proto(2)).toBe('HTTP/2.0')
    expect(proto(3)).toBe('HTTP/3.0')
  })

  it('gives $arg_<name> raw, as the request line has it, and $http_<name> joined when repeated', () => {
    const { kit } = kitFor({ request: { url: 'http://h/p?Q=a%20b+c&q=2&flag', headers: { 'X-Multi': ['1', '2'] } } })
    expect(kit.webserver.get_var('arg_q')).toBe('a%20b+c')
    expect(kit.webserver.get_var('arg_flag')).toBeUndefined()
    expect(kit.webserver.get_var('arg_none')).toBeUndefined()
    expect(kit.webserver.get_var('http_x_multi')).toBe('1, 2')
  })
})
