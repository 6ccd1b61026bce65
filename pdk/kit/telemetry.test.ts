import { describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { toList } from './private/values.js'

describe('telemetry.log', () => {
  it('records a structured entry with plugin attributes', () => {
    const { ctx, kit } = kitFor()
    expect(
      kit.telemetry.log('my-plugin', { __plugin_id: 'p1', plugin_instance_name: 'mine' }, 'audit', 'hello', {
        'user.id': 7,
      }),
    ).toBe(true)
    expect(ctx.telemetry).toEqual([
      {
        plugin: 'my-plugin',
        message_type: 'audit',
        message: 'hello',
        attributes: {
          'user.id': 7,
          'message.type': 'audit',
          'plugin.name': 'my-plugin',
          'plugin.id': 'p1',
          'plugin.instance.name': 'mine',
        },
      },
    ])
  })

  it('returns (nil, err) for bad arguments', () => {
    const { kit } = kitFor()
    expect(toList(kit.telemetry.log(1, {}, 't'))).toEqual([undefined, 'plugin_name must be a string'])
    expect(toList(kit.telemetry.log('p', 'x', 't'))).toEqual([undefined, 'plugin_config must be a table'])
    expect(toList(kit.telemetry.log('p', {}, 1))).toEqual([undefined, 'message_type must be a string'])
    expect(toList(kit.telemetry.log('p', {}, 't', 5))).toEqual([undefined, 'message must be a string'])
    expect(toList(kit.telemetry.log('p', {}, 't', 'm', 'a'))).toEqual([undefined, 'attributes must be a table'])
  })

  it('fails when the OpenTelemetry plugin does not report logs', () => {
    const { kit } = kitFor({ config: { telemetry_logs: false } })
    expect(toList(kit.telemetry.log('p', {}, 't'))[1]).toContain('Telemetry logging is disabled')
  })

  it("checks no phase, as Kong's code; under --strict it is allowed in timer but not in init_worker", () => {
    expect(kitFor({}, 'init_worker').kit.telemetry.log('p', {}, 't')).toBe(true)
    expect(kitFor({}, 'timer', { strict: true }).kit.telemetry.log('p', {}, 't')).toBe(true)
    expect(() => kitFor({}, 'init_worker', { strict: true }).kit.telemetry.log('p', {}, 't')).toThrow(
      "(the reference lists only: rewrite, access, balancer, response, header_filter, body_filter, timer, log; Kong's code allows: any phase)",
    )
  })
})

describe('small modules', () => {
  it('plugin.get_id gives the running plugin instance id in P phases', () => {
    expect(kitFor().kit.plugin.get_id()).toBe('id-1')
    expect(kitFor({}, 'init_worker').kit.plugin.get_id()).toBe('id-1')
    expect(() => kitFor({}, 'init_worker', { strict: true }).kit.plugin.get_id()).toThrow(
      'the reference lists only: rewrite, access, response, header_filter, body_filter, log;',
    )
  })

  it('router gives the route and service', () => {
    const { kit } = kitFor({ route: { id: 'r', protocols: ['http'] }, service: { id: 's' } })
    expect(kit.router.get_route()).toEqual({ id: 'r', protocols: ['http'] })
    expect(kit.router.get_service()).toEqual({ id: 's' })
    expect(kitFor().kit.router.get_service()).toBeUndefined()
  })

  it('ctx.shared and shared are one per-request store', () => {
    const { kit } = kitFor()
    kit.ctx.shared.set('k', 'v')
    expect(kit.shared.get('k')).toBe('v')
    expect(kitFor().kit.ctx.shared.get('k')).toBeUndefined()
  })

  it('cluster.get_id is nil without a configured id', () => {
    expect(kitFor().kit.cluster.get_id()).toBeUndefined()
    expect(kitFor({ cluster: { id: 'c-1' } }).kit.cluster.get_id()).toBe('c-1')
  })

  it('webserver exposes subsystem, statistics, variables and context', () => {
    const { kit } = kitFor({ request: { url: 'https://h/x?a=1', headers: { 'X-Y': 'z' } } })
    expect(kit.webserver.get_subsystem()).toBe('http')
    expect(kit.webserver.get_statistics()).toMatchObject({
      connections_active: 1,
      connections_accepted: 1,
      connections_handled: 1,
      total_requests: 1,
    })
    expect(kit.webserver.get_var('request_uri')).toBe('/x?a=1')
    expect(kit.webserver.get_var('http_x_y')).toBe('z')
    expect(kit.webserver.get_var('arg_a')).toBe('1')
    expect(kit.webserver.get_tls1_version_str()).toBe('TLSv1.3')
    kit.webserver.set_ctx('n', 1)
    expect(kit.webserver.get_ctx('n')).toBe(1)
    expect(typeof kit.webserver.req_start_time()).toBe('number')
  })
})
