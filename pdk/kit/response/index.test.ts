import { describe, expect, it } from 'vitest'
import { kitFor } from '../../runner/harness.js'
import { toList } from '../private/values.js'

describe('response headers', () => {
  it('set_header overrides, add_header appends, clear_header removes all', () => {
    const { ctx, kit } = kitFor()
    kit.response.set_header('X-A', '1')
    kit.response.add_header('x-a', '2')
    kit.response.set_header('X_B', 3)
    expect(ctx.response.headers.table().headers).toEqual({ 'x-a': ['1', '2'], 'x-b': '3' })
    kit.response.set_header('x-a', ['z'])
    expect(ctx.response.headers.get('x-a')).toBe('z')
    kit.response.clear_header('X-A')
    expect(ctx.response.headers.has('x-a')).toBe(false)
  })

  it('keeps underscores when lua_transform_underscores_in_response_headers is off', () => {
    const { ctx, kit } = kitFor({ config: { lua_transform_underscores_in_response_headers: false } })
    kit.response.set_header('x_under', 'v')
    expect(Object.keys(ctx.response.headers.table().headers)).toEqual(['x_under'])
  })

  it("validates names and values with Kong's messages", () => {
    const { kit } = kitFor()
    expect(() => kit.response.set_header(1 as unknown as string, 'v')).toThrow(
      'invalid header name "1": got number, expected string',
    )
    expect(() => kit.response.set_header('x', {})).toThrow(
      'invalid header value for "x": got table, expected array of string, string, number or boolean',
    )
    expect(() => kit.response.add_header('x', ['a', 1])).toThrow(
      'invalid header value in array "x": got number, expected string',
    )
    expect(() => kit.response.set_headers('x' as unknown as Record<string, unknown>)).toThrow('headers must be a table')
    expect(() => kit.response.set_headers({ x: {} })).toThrow(
      'invalid header value for "x": got table, expected string, number, boolean or array of strings',
    )
    expect(() => kit.response.clear_header(2 as unknown as string)).toThrow('header name must be a string')
  })

  it('ignores Transfer-Encoding with a warning', () => {
    const { ctx, kit } = kitFor()
    kit.response.set_header('Transfer-Encoding', 'chunked')
    expect(ctx.response.headers.has('transfer-encoding')).toBe(false)
    expect(ctx.logs[0]?.line).toContain('manually setting Transfer-Encoding. Ignored.')
  })

  it('set_headers writes names in lexicographical order and keeps array order', () => {
    const { ctx, kit } = kitFor()
    kit.response.set_headers({ 'x-b': 'b', 'x-a': ['2', '1'] })
    expect(Object.keys(ctx.response.headers.table().headers)).toEqual(['x-a', 'x-b'])
    expect(ctx.response.headers.all('x-a')).toEqual(['2', '1'])
  })

  it('get_headers reports truncated past the limit', () => {
    const { ctx, kit } = kitFor({}, 'header_filter')
    for (let i = 0; i < 4; i++) ctx.response.headers.add(`h${i}`, 'v')
    expect(toList(kit.response.get_headers(2))).toEqual([{ h0: 'v', h1: 'v' }, 'truncated'])
    expect(kit.response.get_headers()).toEqual({ h0: 'v', h1: 'v', h2: 'v', h3: 'v' })
  })

  it('a response initially has no headers', () => {
    expect(kitFor({}, 'header_filter').kit.response.get_headers()).toEqual({})
  })

  it('set_status validates the code', () => {
    const { ctx, kit } = kitFor()
    kit.response.set_status(201)
    expect(ctx.response.status).toBe(201)
    expect(() => kit.response.set_status(99)).toThrow('code must be a number between 100 and 599')
    expect(() => kit.response.set_status('200' as unknown as number)).toThrow('code must be a number')
  })

  it('readers work only once the response exists', () => {
    expect(() => kitFor({}, 'access').kit.response.get_status()).toThrow(
      'function cannot be called in access phase (only in: response, header_filter, body_filter, log, error, admin_api)',
    )
  })
})

describe('response.exit', () => {
  it('encodes a table body as JSON and sets the content type and length', () => {
    const { ctx, kit } = kitFor()
    kit.response.exit(403, { message: 'nope' }, { 'X-Why': 'policy' })
    expect(ctx.response.status).toBe(403)
    expect(ctx.response.body?.toString()).toBe('{"message":"nope"}')
    expect(ctx.response.headers.table().headers).toEqual({
      'x-why': 'policy',
      'content-type': 'application/json; charset=utf-8',
      'content-length': '18',
    })
    expect(ctx.response.exited).toBe(true)
    expect(ctx.phaseEnded).toBe(true)
  })

  it('sends a string body as is and keeps a given Content-Length', () => {
    const { ctx, kit } = kitFor()
    kit.response.exit(200, 'plain', { 'Content-Length': '99' })
    expect(ctx.response.body?.toString()).toBe('plain')
    expect(ctx.response.headers.get('content-length')).toBe('99')
    expect(ctx.response.headers.has('content-type')).toBe(false)
  })

  it('puts the message in grpc-message for gRPC requests', () => {
    const { ctx, kit } = kitFor({ request: { http_version: 2, headers: { 'content-type': 'application/grpc' } } })
    kit.response.exit(403, { message: 'denied' })
    expect(ctx.response.headers.get('grpc-message')).toBe('denied')
    expect(ctx.response.headers.get('grpc-status')).toBe('7')
  })

  it('rejects invalid input', () => {
    const { kit } = kitFor()
    expect(() => kit.response.exit(600)).toThrow('code must be a number between 100 and 599')
    expect(() => kit.response.exit(200, 5)).toThrow('body must be a nil, string or table')
    expect(() => kit.response.exit(200, 'x', 'h' as unknown as Record<string, unknown>)).toThrow(
      'headers must be a nil or table',
    )
  })

  it('sends a body in header_filter as Kong does; the reference refuses one under --strict', () => {
    const { ctx, kit } = kitFor({}, 'header_filter')
    kit.response.exit(500, 'body')
    expect(ctx.response.body?.toString()).toBe('body')
    expect(() => kitFor({}, 'header_filter', { strict: true }).kit.response.exit(500, 'body')).toThrow(
      'function cannot be called in header_filter phase with a body (only with a nil body)',
    )
    const strict = kitFor({}, 'header_filter', { strict: true })
    strict.kit.response.exit(204)
    expect(strict.ctx.response.status).toBe(204)
  })

  it('works in the response phase, as in Kong since 2.2; --strict names both lists', () => {
    const { ctx, kit } = kitFor({}, 'response')
    kit.response.exit(418, 'teapot')
    expect(ctx.response.status).toBe(418)
    expect(() => kitFor({}, 'response', { strict: true }).kit.response.exit(200)).toThrow(
      "function cannot be called in response phase under --strict (the reference lists only: rewrite, access, header_filter, admin_api; Kong's code allows: rewrite, access, balancer, response, header_filter, error, admin_api)",
    )
  })

  it('is not allowed in log', () => {
    expect(() => kitFor({}, 'log').kit.response.exit(200)).toThrow(
      'function cannot be called in log phase (only in: rewrite, access, balancer, response, header_filter, error, admin_api)',
    )
  })
})

describe('response.exit in L4 (stream) mode', () => {
  const stream = { subsystem: 'stream' as const, request: { url: 'tcp://db.internal:5432' } }

  it('accepts only 200, 400, 403, 500, 502 and 503', () => {
    const { kit } = kitFor(stream, 'preread')
    expect(() => kit.response.exit(404)).toThrow('unacceptable code, only 200, 400, 403, 500, 502 and 503 are accepted')
  })

  it('sends the body to the client below 400', () => {
    const { ctx, kit } = kitFor(stream, 'preread')
    kit.response.exit(200, 'welcome', { 'X-Ignored': '1' })
    expect(ctx.response.body?.toString()).toBe('welcome')
    expect(ctx.response.headers.size).toBe(0)
  })

  it("writes the body to the error log from 400 (Kong's status < 400)", () => {
    const { ctx, kit } = kitFor(stream, 'preread')
    kit.response.exit(403, 'go away')
    expect(ctx.response.body?.toString()).toBe('')
    expect(ctx.logs[0]?.line).toContain('unable to proxy stream connection, status: 403, err: go away')
  })

  it('writes the body to the error log for 500, 502 and 503', () => {
    const { ctx, kit } = kitFor(stream, 'preread')
    kit.response.exit(502, 'upstream down')
    expect(ctx.response.body?.toString()).toBe('')
    expect(ctx.logs[0]).toMatchObject({ level: 'error' })
    expect(ctx.logs[0]?.line).toContain('unable to proxy stream connection, status: 502, err: upstream down')
  })

  it('JSON-encodes a table body and refuses other types', () => {
    const { ctx, kit } = kitFor(stream, 'preread')
    kit.response.exit(200, { a: 1 })
    expect(ctx.response.body?.toString()).toBe('{"a":1}')
    expect(() => kitFor(stream, 'preread').kit.response.exit(200, true)).toThrow('body must be a nil, string or table')
  })
})

describe('response.error', () => {
  it('uses the default message of the status, JSON by default', () => {
    const { ctx, kit } = kitFor()
    kit.response.error(404)
    expect(ctx.response.status).toBe(404)
    expect(ctx.response.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(JSON.parse(ctx.response.body!.toString())).toEqual({ message: 'Not found', request_id: ctx.requestId })
  })

  it('picks the format from Content-Type in the headers first', () => {
    const { ctx, kit } = kitFor({ request: { headers: { accept: 'application/json' } } })
    kit.response.error(503, 'down', { 'Content-Type': 'text/plain' })
    expect(ctx.response.body?.toString()).toBe(`down\nrequest_id: ${ctx.requestId}\n`)
  })

  it('then from the request Accept header: XML, HTML, plain', () => {
    const xml = kitFor({ request: { headers: { accept: 'text/html;q=0.5, application/xml' } } })
    xml.kit.response.error(401)
    expect(xml.ctx.response.body?.toString()).toContain('<message>Unauthorized</message>')
    expect(xml.ctx.response.headers.get('content-type')).toBe('application/xml; charset=utf-8')
    const html = kitFor({ request: { headers: { accept: 'text/html' } } })
    html.kit.response.error(429)
    expect(html.ctx.response.body?.toString()).toContain('<p>Too many requests.</p>')
    const text = kitFor({ request: { headers: { accept: 'text/*' } } })
    text.kit.response.error(500)
    expect(text.ctx.response.body?.toString()).toBe(`An unexpected error occurred\nrequest_id: ${text.ctx.requestId}\n`)
  })

  it('answers JSON to media types named like what every object inherits', () => {
    for (const accept of ['constructor/*', 'tostring/*, constructor/x']) {
      const { ctx, kit } = kitFor({ request: { headers: { accept } } })
      kit.response.error(500)
      expect(ctx.response.headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(JSON.parse(ctx.response.body!.toString())).toMatchObject({ message: 'An unexpected error occurred' })
    }
  })

  it('falls back to a generic message for statuses without one', () => {
    const { ctx, kit } = kitFor()
    kit.response.error(499)
    expect(ctx.response.body?.toString()).toContain('The upstream server responded with 499')
  })

  it('requires a status above 399', () => {
    expect(() => kitFor().kit.response.error(302)).toThrow('code must be a number between 400 and 599')
  })
})
