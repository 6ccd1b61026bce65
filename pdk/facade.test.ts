import { describe, expect, it } from 'vitest'
import { createFacade, PDKError } from './facade.js'
import { kitFor } from './harness.js'
import type { CallRecord } from './trace.js'

type Fn = (...a: unknown[]) => Promise<unknown>
const at = (o: unknown, path: string) => path.split('.').reduce((x, k) => (x as Record<string, unknown>)[k], o) as Fn

describe('kong-js-pdk facade', () => {
  it('reaches every function in camelCase and snake_case, returning promises', async () => {
    const { kit } = kitFor({ request: { url: 'http://example.com/' } })
    const kong = createFacade(kit, () => undefined)
    const camel = at(kong, 'request.getHeader')('host')
    expect(camel).toBeInstanceOf(Promise)
    expect(await camel).toBe('example.com')
    expect(await at(kong, 'request.get_header')('host')).toBe('example.com')
    expect(at(kong, 'client.tls.getFullClientCertificateChain')).toBe(
      at(kong, 'client.tls.get_full_client_certificate_chain'),
    )
    expect(typeof at(kong, 'enterpriseEdition.jwe.decode')).toBe('function')
    expect(typeof at(kong, 'nginx.getSubsystem')).toBe('function')
    expect(typeof at(kong, 'webserver.getTls1VersionStr')).toBe('function')
  })

  it("also answers to kong-js-pdk's own spelling of names with digits (nginx.getTls1_versionStr)", async () => {
    const { kit } = kitFor({ request: { url: 'https://example.com/' } })
    const kong = createFacade(kit, () => undefined)
    expect(await at(kong, 'nginx.getTls1_versionStr')()).toBe('TLSv1.3')
  })

  it('rejects a soft failure (nil, err) with an error carrying err', async () => {
    const { kit } = kitFor()
    const kong = createFacade(kit, () => undefined)
    const err = await at(kong, 'request.getBody')().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(PDKError)
    expect((err as Error).message).toBe('PDK method kong.request.get_body failed:  missing content type')
    expect((kong as { Error: unknown }).Error).toBe(PDKError)
  })

  it("returns log.serialize as JSON text, as Kong's plugin server does for external plugins", async () => {
    const { kit } = kitFor({ request: { url: 'http://example.com/p' } }, 'log')
    const kong = createFacade(kit, () => undefined)
    await at(kong, 'log.setSerializeValue')('a.b', 1)
    const text = await at(kong, 'log.serialize')()
    expect(typeof text).toBe('string')
    expect(JSON.parse(text as string)).toMatchObject({ a: { b: 1 }, request: { uri: '/p' } })
  })

  it('kong.log(...) is the base log call at notice severity and still has its levels', async () => {
    const { ctx, kit } = kitFor()
    const kong = createFacade(kit, () => undefined) as unknown as { log: Fn & { err: Fn } }
    await kong.log('hello ', 42)
    await kong.log.err('bad')
    expect(ctx.logs.map((l) => l.level)).toEqual(['notice', 'error'])
    expect(ctx.logs[0]!.line).toContain('[test-plugin] hello 42')
  })

  it('rejects when the kit throws, e.g. a phase error', async () => {
    const { kit } = kitFor({}, 'log')
    const kong = createFacade(kit, () => undefined)
    await expect(at(kong, 'response.setHeader')('a', 'b')).rejects.toThrow('function cannot be called in log phase')
  })

  it('records every call with its arguments and results', async () => {
    const { kit } = kitFor()
    const seen: CallRecord[] = []
    const kong = createFacade(kit, () => (r) => seen.push(r))
    await at(kong, 'request.getQuery')()
    await at(kong, 'response.setStatus')('x').catch(() => undefined)
    expect(seen).toEqual([
      { call: 'request.get_query', args: [], returns: [{}] },
      { call: 'response.set_status', args: ['x'], throws: 'code must be a number' },
    ])
  })
})
