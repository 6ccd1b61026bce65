import { describe, expect, it } from 'vitest'
import { createFacade, openSession } from './facade.js'
import { kitFor } from '../runner/harness.js'
import type { Fixture } from '../fixture/index.js'
import type { Phase } from '../kit/private/phases.js'
import type { CallRecord } from '../kit/private/trace.js'

type Fn = (...a: unknown[]) => Promise<unknown>
const at = (o: unknown, path: string) => path.split('.').reduce((x, k) => (x as Record<string, unknown>)[k], o) as Fn

function setup(request: Partial<Fixture['request']> = {}, phase: Phase = 'access', seen?: CallRecord[]) {
  const { ctx, kit } = kitFor({ request }, phase)
  const kong = createFacade(kit, ctx, () => (seen ? (r) => seen.push(r) : undefined))
  return { ctx, kong, session: openSession(kong) }
}

/** Whether a promise settles within a few turns of the event loop. */
const settles = (p: Promise<unknown>) =>
  Promise.race([p.then(() => true), new Promise((r) => setTimeout(() => r(false), 20))])

describe('kong-js-pdk facade', () => {
  it("names calls by kong-js-pdk's camelCase rule, each returning a promise", async () => {
    const seen: CallRecord[] = []
    const { kong } = setup({}, 'access', seen)
    const camel = at(kong, 'request.getHeader')('host')
    expect(camel).toBeInstanceOf(Promise)
    expect(await camel).toBe('example.com')
    expect(await at(kong, 'request.get_header')('host')).toBe('example.com')
    await at(kong, 'client.tls.getFullClientCertificateChain')()
    await at(kong, 'client.tls.get_full_client_certificate_chain')()
    expect(seen.map((r) => r.call)).toEqual([
      'request.get_header',
      'request.get_header',
      'client.tls.get_full_client_certificate_chain',
      'client.tls.get_full_client_certificate_chain',
    ])
  })

  it('a name kong-js-pdk maps to no method resolves undefined and Kong logs it (getTls1VersionStr)', async () => {
    const { ctx, kong } = setup({ url: 'https://example.com/' })
    expect(await at(kong, 'nginx.getTls1_versionStr')()).toBe('TLSv1.3')
    expect(await at(kong, 'nginx.getTls1VersionStr')()).toBeUndefined()
    expect(ctx.logs.at(-1)!.line).toContain('could not find pdk method: kong.nginx.get_tls1Version_str')
  })

  it('resolves a soft failure (nil, err) to undefined: Kong sends only the first value', async () => {
    const { kong } = setup()
    expect(await at(kong, 'request.getBody')()).toBeUndefined()
  })

  it('gives raw bodies as Buffers and header or query maps with array values', async () => {
    const { kong } = setup({ url: 'http://example.com/?a=1&flag&a=2', method: 'POST', body: 'héllo' })
    const body = await at(kong, 'request.getRawBody')()
    expect(Buffer.isBuffer(body)).toBe(true)
    expect((body as Buffer).toString()).toBe('héllo')
    expect(await at(kong, 'request.getQuery')()).toEqual({ a: ['1', '2'], flag: [] })
    expect(await at(kong, 'request.getHeaders')()).toMatchObject({ host: ['example.com'] })
  })

  it('passes arguments as Lua receives them: Buffer → string, null dropped, [] and {} one table', async () => {
    const seen: CallRecord[] = []
    const { ctx, kong } = setup({}, 'access', seen)
    await at(kong, 'service.request.setRawBody')(Buffer.from('bytes'))
    expect(ctx.upstream.body.toString()).toBe('bytes')
    await at(kong, 'ctx.shared.set')('k', { a: 1, gone: null, list: [] })
    expect(await at(kong, 'ctx.shared.get')('k')).toEqual({ a: 1, list: [] })
    expect(seen[1]!.args).toEqual(['k', { a: 1, list: {} }])
    await at(kong, 'ctx.shared.set')('empty', {})
    expect(await at(kong, 'ctx.shared.get')('empty')).toEqual([])
  })

  it('returns log.serialize as cjson text', async () => {
    const { kong } = setup({ url: 'http://example.com/p' }, 'log')
    const text = await at(kong, 'log.serialize')()
    expect(typeof text).toBe('string')
    expect(text).toContain('"uri":"\\/p"')
    expect(JSON.parse(text as string)).toMatchObject({ request: { uri: '/p' } })
  })

  it('kong.log(...) is the base log call at notice severity and still has its levels', async () => {
    const { ctx, kong } = setup()
    await (kong.log as unknown as Fn)('hello ', 42)
    await at(kong, 'log.err')('bad')
    expect(ctx.logs.map((l) => l.level)).toEqual(['notice', 'error'])
    expect(ctx.logs[0]!.line).toContain('mp_rpc.lua:127 [test-plugin] hello 42')
  })

  it('a call that raises ends the session with the error and is never answered, nor are later calls', async () => {
    const { kong, session } = setup({}, 'log')
    const raised = at(kong, 'response.setHeader')('a', 'b')
    expect(await settles(raised)).toBe(false)
    expect(session.raised).toContain('function cannot be called in log phase')
    expect(await settles(at(kong, 'request.getMethod')())).toBe(false)
  })

  it('exit resolves at once; calls after it are never answered', async () => {
    const { ctx, kong, session } = setup()
    expect(await at(kong, 'response.exit')(403)).toBeUndefined()
    expect(session.ended).toBe(true)
    expect(session.raised).toBeUndefined()
    expect(ctx.response.status).toBe(403)
    expect(await settles(at(kong, 'request.getMethod')())).toBe(false)
  })

  it('records every call with the arguments the kit saw and its results', async () => {
    const seen: CallRecord[] = []
    const { kong } = setup({}, 'access', seen)
    await at(kong, 'request.getQuery')()
    void at(kong, 'response.setStatus')('x')
    expect(seen).toEqual([
      { call: 'request.get_query', args: [], returns: [{}] },
      { call: 'response.set_status', args: ['x'], throws: 'code must be a number' },
    ])
  })
})
