import { describe, expect, it } from 'vitest'
import { kitFor } from '../../runner/harness.js'
import { toList } from '../private/values.js'

const consumers = [
  { id: '5f8f0f9a-1b3c-4d5e-8f70-0a1b2c3d4e5f', username: 'alice' },
  { id: '6a9b1c2d-3e4f-4a5b-9c6d-7e8f9a0b1c2d', username: 'bob' },
]
const consumer_groups = [
  { id: 'g-gold', name: 'gold', consumers: [consumers[0]!.id] },
  { id: 'g-all', name: 'all', consumers: [consumers[0]!.id, consumers[1]!.id] },
]

describe('client addresses', () => {
  it('get_ip and get_port give the directly connected peer', () => {
    const { kit } = kitFor({ request: { client: { ip: '10.0.0.5', port: 4000 } } })
    expect(kit.client.get_ip()).toBe('10.0.0.5')
    expect(kit.client.get_port()).toBe(4000)
  })

  it('forwarded ip comes from real_ip_header only when the peer is trusted', () => {
    const request = { client: { ip: '10.0.0.5', port: 4000 }, headers: { 'X-Real-IP': '198.51.100.7' } }
    expect(kitFor({ config: { trusted_ips: ['10.0.0.0/8'] }, request }).kit.client.get_forwarded_ip()).toBe(
      '198.51.100.7',
    )
    expect(kitFor({ request }).kit.client.get_forwarded_ip()).toBe('10.0.0.5')
  })

  it('real_ip_recursive walks X-Forwarded-For past trusted hops', () => {
    const base = {
      request: { client: { ip: '10.0.0.5', port: 4000 }, headers: { 'X-Forwarded-For': '198.51.100.7, 10.0.0.9' } },
    }
    const config = { trusted_ips: ['10.0.0.0/8'], real_ip_header: 'X-Forwarded-For' }
    expect(kitFor({ ...base, config: { ...config, real_ip_recursive: true } }).kit.client.get_forwarded_ip()).toBe(
      '198.51.100.7',
    )
    expect(kitFor({ ...base, config: { ...config, real_ip_recursive: false } }).kit.client.get_forwarded_ip()).toBe(
      '10.0.0.9',
    )
    // nginx's $remote_port is empty when the forwarded address has no port: Kong gives nil
    expect(kitFor({ ...base, config }).kit.client.get_forwarded_port()).toBeUndefined()
    expect(kitFor({ ...base, config }).kit.client.get_port()).toBe(4000)
  })

  it('takes the port of a forwarded address from a trusted peer', () => {
    for (const header of ['X-Forwarded-For', 'X-Real-IP']) {
      const { kit } = kitFor({
        request: { client: { ip: '10.0.0.5', port: 4000 }, headers: { [header]: '10.0.0.1:1234' } },
        config: { trusted_ips: ['10.0.0.0/8'], real_ip_header: header },
      })
      expect(kit.client.get_forwarded_ip()).toBe('10.0.0.1')
      expect(kit.client.get_forwarded_port()).toBe(1234)
      expect(kit.client.get_port()).toBe(4000)
    }
  })

  it('answers addresses in admin_api as Kong does, and only in the reference phases under --strict', () => {
    const { ctx, kit } = kitFor({}, 'admin_api')
    expect(kit.client.get_ip()).toBe('127.0.0.1')
    ctx.strict = true
    expect(() => kit.client.get_ip()).toThrow(
      "function cannot be called in admin_api phase under --strict (the reference lists only: certificate, rewrite, access, response, header_filter, body_filter, log; Kong's code allows: any phases except: init_worker)",
    )
    ctx.phase = 'init_worker'
    ctx.strict = false
    expect(() => kit.client.get_ip()).toThrow(
      'function cannot be called in init_worker phase (can be called in any phases except: init_worker)',
    )
  })
})

describe('authentication state', () => {
  it('authenticate sets consumer, credential and the consumer groups', () => {
    const { kit } = kitFor({ consumers, consumer_groups })
    kit.client.authenticate(consumers[0], { id: 'cred', consumer_id: consumers[0]!.id })
    expect(kit.client.get_consumer()).toEqual(consumers[0])
    expect(kit.client.get_credential()).toEqual({ id: 'cred', consumer_id: consumers[0]!.id })
    expect(kit.client.get_consumer_groups()?.map((g) => g.name)).toEqual(['all', 'gold'])
  })

  it('authenticate needs one of consumer or credential and tables only', () => {
    const { kit } = kitFor()
    expect(() => kit.client.authenticate(null, null)).toThrow('either credential or consumer must be provided')
    expect(() => kit.client.authenticate('x' as never)).toThrow('consumer must be a table or nil')
    expect(() => kit.client.authenticate(null, 5 as never)).toThrow('credential must be a table or nil')
  })

  it('a nil value clears the existing one', () => {
    const { kit } = kitFor()
    kit.client.authenticate({ id: 'c' }, { id: 'k' })
    kit.client.authenticate(null, { id: 'k2' })
    expect(kit.client.get_consumer()).toBeUndefined()
    expect(kit.client.get_credential()).toEqual({ id: 'k2' })
  })

  it('getters are nil before anything is set and only from access on', () => {
    expect(kitFor().kit.client.get_consumer()).toBeUndefined()
    expect(kitFor().kit.client.get_consumer_groups()).toBeUndefined()
    expect(() => kitFor({}, 'rewrite').kit.client.get_consumer()).toThrow(
      'function cannot be called in rewrite phase (only in: access, response, header_filter, body_filter, log)',
    )
    expect(() => kitFor({}, 'header_filter').kit.client.authenticate({ id: 'x' })).toThrow('(only in: access)')
  })

  it('authenticate_consumer_group_by_consumer_id does not override an authenticated group', () => {
    const { kit } = kitFor({ consumers, consumer_groups })
    kit.client.authenticate_consumer_group_by_consumer_id(consumers[1]!.id)
    expect(kit.client.get_consumer_groups()).toEqual([{ id: 'g-all', name: 'all' }])
    kit.client.authenticate_consumer_group_by_consumer_id(consumers[0]!.id)
    expect(kit.client.get_consumer_groups()).toEqual([{ id: 'g-all', name: 'all' }])
    expect(() => kit.client.authenticate_consumer_group_by_consumer_id(5 as never)).toThrow(
      'consumer_id must be a string or nil',
    )
  })

  it('set_authenticated_consumer_groups sets, validates and clears', () => {
    const { kit } = kitFor()
    kit.client.set_authenticated_consumer_groups([{ id: '1', name: 'a' }])
    expect(kit.client.get_consumer_groups()).toEqual([{ id: '1', name: 'a' }])
    expect(kit.client.get_consumer_group()).toEqual({ id: '1', name: 'a' })
    expect(() => kit.client.set_authenticated_consumer_groups('x' as never)).toThrow('groups must be a table or nil')
    expect(() => kit.client.set_authenticated_consumer_groups([{ id: '1' }])).toThrow(
      'each consumer group must be a table with an id and a name',
    )
    kit.client.set_authenticated_consumer_groups(null)
    expect(kit.client.get_consumer_groups()).toBeUndefined()
    kit.client.set_authenticated_consumer_group({ id: '2', name: 'b' })
    expect(kit.client.get_consumer_groups()).toEqual([{ id: '2', name: 'b' }])
    expect(() => kit.client.set_authenticated_consumer_group(1 as never)).toThrow('group must be a table or nil')
  })

  it('load_consumer finds by id, then by username when asked', () => {
    const { kit } = kitFor({ consumers })
    expect(kit.client.load_consumer(consumers[1]!.id)).toEqual(consumers[1])
    expect(kit.client.load_consumer('alice', true)).toEqual(consumers[0])
    expect(() => kit.client.load_consumer('alice')).toThrow('cannot load a consumer with an id that is not a uuid')
    expect(kit.client.load_consumer('00000000-0000-4000-8000-000000000000')).toBeUndefined()
  })

  it('get_protocol follows the route and trusted X-Forwarded-Proto', () => {
    expect(toList(kitFor().kit.client.get_protocol())).toEqual([undefined, 'No active route found'])
    expect(kitFor({ route: { protocols: ['grpc'] } }).kit.client.get_protocol()).toBe('grpc')
    const fwd = {
      route: { protocols: ['http', 'https'] },
      config: { trusted_ips: ['127.0.0.1'] },
      request: { headers: { 'X-Forwarded-Proto': 'https' } },
    }
    expect(kitFor(fwd).kit.client.get_protocol()).toBe('http')
    expect(kitFor(fwd).kit.client.get_protocol(true)).toBe('https')
  })
  it('get_protocol refuses more than one trusted X-Forwarded-Proto, as Kong', () => {
    const headers = { 'X-Forwarded-Proto': ['https', 'http'] }
    const fwd = {
      route: { protocols: ['http', 'https'] },
      config: { trusted_ips: ['127.0.0.1'] },
      request: { headers },
    }
    expect(toList(kitFor(fwd).kit.client.get_protocol(true))).toEqual([
      undefined,
      'Only one X-Forwarded-Proto header allowed',
    ])
    expect(
      toList(
        kitFor({ ...fwd, request: { headers: { 'X-Forwarded-Proto': 'https,http' } } }).kit.client.get_protocol(true),
      ),
    ).toEqual([undefined, 'Only one X-Forwarded-Proto header allowed'])
    expect(kitFor(fwd).kit.client.get_protocol()).toBe('http')
  })
})

describe('client.tls', () => {
  const chain = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'

  it('a fixture may give the presented chain as a plain PEM string', () => {
    const { ctx, kit } = kitFor({ request: { url: 'https://h/', tls: chain } }, 'certificate')
    kit.client.tls.request_client_certificate()
    ctx.phase = 'access'
    expect(kit.client.tls.get_full_client_certificate_chain()).toBe(chain)
  })

  it('the chain is visible later only when requested in the certificate phase', () => {
    const { ctx, kit } = kitFor(
      { request: { url: 'https://h/', tls: { client_certificate_chain: chain } } },
      'certificate',
    )
    expect(kit.client.tls.request_client_certificate()).toBe(true)
    expect(kit.client.tls.disable_session_reuse()).toBe(true)
    ctx.phase = 'access'
    expect(kit.client.tls.get_full_client_certificate_chain()).toBe(chain)
  })

  it('without a request there is no chain, and without a client certificate neither', () => {
    const { ctx, kit } = kitFor({ request: { url: 'https://h/', tls: { client_certificate_chain: chain } } }, 'access')
    expect(kit.client.tls.get_full_client_certificate_chain()).toBeUndefined()
    const none = kitFor({ request: { url: 'https://h/' } }, 'certificate')
    none.kit.client.tls.request_client_certificate()
    none.ctx.phase = 'log'
    expect(none.kit.client.tls.get_full_client_certificate_chain()).toBeUndefined()
    expect(ctx.tls.certificateRequested).toBe(false)
  })

  it('set_client_verify accepts SUCCESS, NONE and FAILED:<reason>', () => {
    const { ctx, kit } = kitFor({ request: { url: 'https://h/' } }, 'access')
    kit.client.tls.set_client_verify('FAILED:expired')
    expect(ctx.tls.verifyOverride).toBe('FAILED:expired')
    expect(() => kit.client.tls.set_client_verify('MAYBE')).toThrow(
      'unknown client verify value: MAYBE accepted values are: "SUCCESS", "NONE" or "FAILED:<reason>"',
    )
    ctx.phase = 'log'
    expect(() => kit.client.tls.set_client_verify('NONE')).toThrow('(only in: rewrite, access, balancer, response)')
    expect(kit.log.serialize()).toMatchObject({ request: { tls: { client_verify: 'FAILED:expired' } } })
  })

  it('certificate operations are only for the certificate phase', () => {
    expect(() =>
      kitFor({ request: { url: 'https://h/' } }, 'access').kit.client.tls.request_client_certificate(),
    ).toThrow('(only in: certificate)')
  })
})
