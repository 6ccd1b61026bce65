import { describe, expect, it } from 'vitest'
import { looksLike, readings } from './field-names.js'

describe('readings', () => {
  it('reads a name as PHP, qs and case-insensitive frameworks do', () => {
    expect(readings('id.token')).toContain('id_token')
    expect(readings(' error')).toContain('error')
    expect(readings('id token verified')).toContain('id_token_verified')
    expect(readings('id[token')).toContain('id_token')
    expect(readings('access_token[]')).toContain('access_token')
    expect(readings('state[x]')).toContain('state')
    expect(readings('ACCESS_TOKEN')).toContain('access_token')
    expect(readings('broker.error')).toContain('broker')
    expect(readings('id_token\0x')).toContain('id_token')
  })
})

describe('looksLike', () => {
  it.each([
    'id.token',
    ' error',
    'id token verified',
    'access.token',
    'id[token',
    'access_token[]',
    'state[]',
    'id.token.verified',
    'broker.error',
    'Error',
    '  state',
    'result[a]',
    'access secret',
    '__proto__',
  ])('refuses %j, a look-alike of a broker field', (name) => {
    expect(looksLike(name)).toBe(true)
  })

  it.each([
    'access_token',
    'state',
    'realmId',
    'instance_url',
    'authed_user',
    'id_token_hint_x',
    'stateful',
    'user.name',
  ])('keeps %j', (name) => {
    expect(looksLike(name)).toBe(false)
  })
})
