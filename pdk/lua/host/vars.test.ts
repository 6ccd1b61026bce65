import { describe, expect, it } from 'vitest'
import { kitFor } from '../../runner/harness.js'
import { readVariable, writeRefusal } from './vars.js'

describe('nginx variables', () => {
  it('refuses writes as nginx does: an unknown name, and a built-in that cannot change', () => {
    expect(writeRefusal('args')).toBeUndefined()
    expect(writeRefusal('upstream_x_forwarded_prefix')).toBeUndefined()
    expect(writeRefusal('request_uri')).toBe('variable "request_uri" not changeable')
    expect(writeRefusal('http_host')).toBe('variable "http_host" not changeable')
    expect(writeRefusal('session_secret')).toBe(
      `variable "session_secret" not found for writing; maybe it is a built-in variable that is not changeable or you forgot to use "set $session_secret '';" in the config file to define it first`,
    )
  })

  it("answers Kong's $kong_request_id (lua-kong-nginx-module) with the request's id, as $request_id", () => {
    const { ctx } = kitFor()
    expect(readVariable(ctx, 'kong_request_id', () => undefined)).toBe(ctx.requestId)
    expect(ctx.logs).toEqual([])
  })

  it('reads a name nginx does not have as nil, silently, as OpenResty does', () => {
    const { ctx } = kitFor()
    expect(readVariable(ctx, 'session_secret', () => undefined)).toBeUndefined()
    expect(ctx.logs).toEqual([])
  })

  it('reads a variable nginx has and broker does not emulate as nil, warning once a request, naming it', () => {
    const { ctx } = kitFor()
    expect(readVariable(ctx, 'ssl_client_s_dn', () => undefined)).toBeUndefined()
    expect(readVariable(ctx, 'ssl_client_s_dn', () => undefined)).toBeUndefined()
    expect(readVariable(ctx, 'sent_trailer_grpc_status', () => undefined)).toBeUndefined()
    expect(ctx.logs.map((l) => l.level)).toEqual(['warn', 'warn'])
    expect(ctx.logs[0]!.line).toMatch(
      /\[test-plugin\] ngx\.var\.ssl_client_s_dn reads nil: broker does not emulate nginx's \$ssl_client_s_dn \(the client certificate's subject\)/,
    )
    expect(ctx.logs[1]!.line).toMatch(/ngx\.var\.sent_trailer_grpc_status reads nil: .* \(a trailer of the answer\)/)
    // the next request is told again
    const next = kitFor().ctx
    readVariable(next, 'ssl_client_s_dn', () => undefined)
    expect(next.logs).toHaveLength(1)
  })
})
