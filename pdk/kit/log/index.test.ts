import { describe, expect, it } from 'vitest'
import { kitFor } from '../../runner/harness.js'
import { HeaderList } from '../private/headers.js'

describe('log lines', () => {
  it('follow the gateway format with level label, plugin name and request details', () => {
    const { ctx, kit } = kitFor({
      request: { url: 'http://example.com/p?q=1', client: { ip: '203.0.113.9', port: 1 } },
    })
    kit.log.notice('hello ', 42, ' ', { a: 1 }, ' ', null)
    const line = ctx.logs[0]!.line
    expect(line).toMatch(
      /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d \[notice\] \d+#0: \*1 \[gateway\] \S+:\d+ \[test-plugin\] hello 42 table: 0x[0-9a-f]+ nil, client: 203\.0\.113\.9, server: kong, request: "GET \/p\?q=1 HTTP\/1\.1", host: "example\.com"$/,
    )
  })

  it("in the log phase, say what nginx was doing: 'while logging request' before the request's details", () => {
    const { ctx, kit } = kitFor({ request: { url: 'http://example.com/p' } }, 'log')
    kit.log.err('failed to open the file: Is a directory')
    expect(ctx.logs[0]!.line).toMatch(
      /\[test-plugin\] failed to open the file: Is a directory while logging request, client: [\d.]+, server: kong, request: "GET \/p HTTP\/1\.1", host: "example\.com"$/,
    )
  })

  it('name the calling file and line', () => {
    const { ctx, kit } = kitFor()
    kit.log.info('x')
    expect(ctx.logs[0]!.line).toContain('[gateway] index.test.ts:')
  })

  it('label err as error and keep the other levels', () => {
    const { ctx, kit } = kitFor()
    for (const level of ['alert', 'crit', 'err', 'warn', 'notice', 'info', 'debug'] as const) kit.log[level]('m')
    expect(ctx.logs.map((l) => l.level)).toEqual(['alert', 'crit', 'error', 'warn', 'notice', 'info', 'debug'])
    expect(ctx.logs[2]!.line).toContain(' [error] ')
  })

  it('omit the plugin segment when no plugin is running', () => {
    const { ctx, kit } = kitFor()
    ctx.plugin = undefined
    kit.log.warn('core')
    expect(ctx.logs[0]!.line).toMatch(/\[gateway\] \S+ core, client/)
  })

  it('work in init_worker without request details', () => {
    const { ctx, kit } = kitFor({}, 'init_worker')
    kit.log.info('boot')
    expect(ctx.logs[0]!.line).toMatch(/ boot$/)
  })

  it('throw without arguments', () => {
    expect(() => kitFor().kit.log.err()).toThrow('expected at least one argument')
  })
})

describe('log.deprecation', () => {
  it('logs at warn with the removal schedule from the metadata table', () => {
    const { ctx, kit } = kitFor()
    kit.log.deprecation('old ', 'thing', { after: '2.5.0', removal: '3.0.0' })
    expect(ctx.logs[0]!.level).toBe('warn')
    expect(ctx.logs[0]!.line).toContain('old thing (deprecated after 2.5.0, scheduled for removal in 3.0.0), client')
  })

  it('handles partial metadata and plain calls', () => {
    const { ctx, kit } = kitFor()
    kit.log.deprecation('a', { after: '1.0' })
    kit.log.deprecation('b', { removal: '2.0' })
    kit.log.deprecation('c')
    expect(ctx.logs.map((l) => /\] (a|b|c)[^,]*/.exec(l.line)![0])).toEqual([
      '] a (deprecated after 1.0)',
      '] b (scheduled for removal in 2.0)',
      '] c',
    ])
  })

  it('takes a lone table as the metadata, with an empty message', () => {
    const { ctx, kit } = kitFor()
    kit.log.deprecation({ after: '1.0', removal: '2.0' })
    expect(ctx.logs[0]!.line).toContain('[test-plugin]  (deprecated after 1.0, scheduled for removal in 2.0), client')
  })

  it('adds a stack trace when trace is true', () => {
    const { ctx, kit } = kitFor()
    kit.log.deprecation('t', { trace: true })
    expect(ctx.logs[0]!.line).toContain('stack traceback:')
  })
})

describe('serialize and set_serialize_value', () => {
  it('an L4 record carries session latencies, as Kong stream serialize', () => {
    const { kit } = kitFor({ subsystem: 'stream', request: { url: 'tcp://h:9000' } }, 'log')
    const record = kit.log.serialize() as { latencies: Record<string, number>; session: unknown }
    expect(Object.keys(record.latencies).sort()).toEqual(['kong', 'session'])
    expect(record.session).toMatchObject({ server_port: 9000 })
  })

  it("builds request.url with the port after port_maps, as Kong's host_port", () => {
    const mapped = { request: { url: 'http://example.com:8000/a?b=1' }, config: { port_maps: ['80:8000'] } }
    expect((kitFor(mapped, 'log').kit.log.serialize() as { request: { url: string } }).request.url).toBe(
      'http://example.com:80/a?b=1',
    )
    const plain = { request: { url: 'http://example.com:8000/a' } }
    expect((kitFor(plain, 'log').kit.log.serialize() as { request: { url: string } }).request.url).toBe(
      'http://example.com:8000/a',
    )
  })

  it('tries: none for a request with no service, an empty list for one a plugin ended before the upstream', () => {
    const bare = kitFor({}, 'log')
    expect((bare.kit.log.serialize() as { tries?: unknown }).tries).toBeUndefined()
    const ended = kitFor({}, 'log')
    ended.ctx.data.service = { id: 's1', host: 'upstream.test' }
    expect((ended.kit.log.serialize() as { tries?: unknown }).tries).toEqual([])
  })

  it("upstream_status: nginx's text, or with buffered proxying Kong's ctx.buffered_status, a number", () => {
    const served = (buffered: boolean) => {
      const { ctx, kit } = kitFor({}, 'log')
      ctx.response.service = { status: 201, headers: HeaderList.from({}), body: Buffer.alloc(0) }
      ctx.upstream.buffered = buffered
      return (kit.log.serialize() as { upstream_status: unknown }).upstream_status
    }
    expect([served(false), served(true)]).toEqual(['201', 201])
  })

  it('serialize is only for the log phase', () => {
    expect(() => kitFor({}, 'access').kit.log.serialize()).toThrow(
      'function cannot be called in access phase (only in: log)',
    )
  })

  it('serializes the request, response and auth state, redacting authorization', () => {
    const { ctx, kit } = kitFor({ request: { url: 'http://h/x?a=1', headers: { authorization: 'secret' } } }, 'log')
    ctx.auth.consumer = { id: 'c1' }
    ctx.auth.credential = { id: 'cred1' }
    const out = kit.log.serialize()
    expect(out).toMatchObject({
      request: {
        method: 'GET',
        uri: '/x?a=1',
        url: 'http://h:80/x?a=1',
        querystring: { a: '1' },
        headers: { authorization: 'REDACTED' },
      },
      consumer: { id: 'c1' },
      authenticated_entity: { id: 'cred1', consumer_id: 'c1' },
      client_ip: '127.0.0.1',
    })
  })

  it('sets, adds and replaces values at dotted keys', () => {
    const { ctx, kit } = kitFor({}, 'access')
    kit.log.set_serialize_value('custom.a.b', 1)
    kit.log.set_serialize_value('custom.a.b', 2, { mode: 'add' })
    kit.log.set_serialize_value('custom.c', 3, { mode: 'add' })
    kit.log.set_serialize_value('request.method', 'PATCHED', { mode: 'replace' })
    kit.log.set_serialize_value('missing.x', 4, { mode: 'replace' })
    kit.log.set_serialize_value('dotted\\.key', true)
    kit.log.set_serialize_value('client_ip', undefined)
    ctx.phase = 'log'
    const out = kit.log.serialize()
    expect(out.custom).toEqual({ a: { b: 1 }, c: 3 })
    expect((out.request as Record<string, unknown>).method).toBe('PATCHED')
    expect(out.missing).toBeUndefined()
    expect(out['dotted.key']).toBe(true)
    expect(out.client_ip).toBeUndefined()
  })

  it('checks the key and mode at once and the value when serializing', () => {
    const { ctx, kit } = kitFor({}, 'access')
    expect(() => kit.log.set_serialize_value(1 as unknown as string, 1)).toThrow('key must be a string')
    expect(() => kit.log.set_serialize_value('k', 1, { mode: 'upsert' })).toThrow(
      "mode must be 'set', 'add' or 'replace'",
    )
    const self: Record<string, unknown> = {}
    self.self = self
    kit.log.set_serialize_value('k', self)
    ctx.phase = 'log'
    expect(() => kit.log.serialize()).toThrow('non-self-referencial table')
  })

  it('refuses a dotted key through a non-table', () => {
    const { ctx, kit } = kitFor({}, 'access')
    kit.log.set_serialize_value('client_ip.x', 1)
    ctx.phase = 'log'
    expect(() => kit.log.serialize()).toThrow("Subkey 'client_ip' is not a table")
  })

  it("set_serialize_value is allowed in Kong's phases_with_ctx only", () => {
    expect(() => kitFor({}, 'init_worker').kit.log.set_serialize_value('k', 1)).toThrow(
      '(only in: rewrite, access, response, header_filter, body_filter, log)',
    )
  })
})

describe('log.new and log.inspect', () => {
  it('a namespaced logger tags its lines and follows its own format', () => {
    const { ctx, kit } = kitFor()
    const log = kit.log.new('my_namespace')
    log.notice('hello world')
    kit.log.new('fmt', '%namespace says %message').warn('hi')
    expect(ctx.logs[0]?.line).toContain('[my_namespace] hello world')
    expect(ctx.logs[1]?.line).toMatch(/\[warn\] .* fmt says hi, client:/)
    expect(() => kit.log.new('')).toThrow('namespace cannot be an empty string')
  })

  it('inspect pretty-prints, and off() / on() silence it for one logger only', () => {
    const { ctx, kit } = kitFor()
    const other = kit.log.new('my_namespace')
    kit.log.inspect('log me')
    kit.log.inspect.off()
    kit.log.inspect('hidden')
    other.inspect({ a: 1 })
    kit.log.inspect.on()
    kit.log.inspect('log again')
    const lines = ctx.logs.map((l) => l.line)
    expect(lines.some((l) => l.includes('hidden'))).toBe(false)
    expect(lines.filter((l) => /"log me"|"log again"/.test(l))).toHaveLength(2)
    expect(lines.some((l) => l.includes('[my_namespace]\n{\n  a = 1\n}'))).toBe(true)
  })
})
