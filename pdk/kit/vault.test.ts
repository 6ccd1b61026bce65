import { describe, expect, it } from 'vitest'
import { kitFor } from '../runner/harness.js'
import { toList } from './private/values.js'
import { isReference, parseReference } from './vault.js'

describe('vault references', () => {
  it('is_reference checks only the {vault:// prefix and } suffix', () => {
    expect(isReference('{vault://env/x}')).toBe(true)
    expect(isReference('{vault://}')).toBe(true)
    expect(isReference('vault://env/x')).toBe(false)
    expect(isReference('{vault://env/x')).toBe(false)
    expect(isReference(5)).toBe(false)
  })

  it('parses name, resource, key, options and version', () => {
    expect(parseReference('{vault://aws/db-creds/password?region=eu-west-1&ttl=60#2}')).toEqual({
      name: 'aws',
      resource: 'db-creds',
      key: 'password',
      config: { region: 'eu-west-1', ttl: '60' },
      version: 2,
    })
    expect(parseReference('{vault://env/my-secret}')).toEqual({ name: 'env', resource: 'my-secret' })
    expect(parseReference('{vault://hcv/path/to/dir/}')).toEqual({ name: 'hcv', resource: 'path/to/dir' })
  })

  it("returns Kong's errors for bad references", () => {
    expect(toList(parseReference('nope'))).toEqual([undefined, 'not a reference [nope]'])
    expect(toList(parseReference('{vault:///x}'))).toEqual([undefined, 'reference url is missing host [{vault:///x}]'])
    expect(toList(parseReference('{vault://env}'))).toEqual([
      undefined,
      'reference url is missing path [{vault://env}]',
    ])
    expect(toList(parseReference('{vault://env/}'))).toEqual([
      undefined,
      'reference url has empty path [{vault://env/}]',
    ])
    expect(toList(parseReference('{vault://env/x#v1}'))).toEqual([
      undefined,
      'reference url has invalid version [{vault://env/x#v1}]',
    ])
  })
})

describe('vault.get from an env-style vault', () => {
  const vault = {
    env: { MY_SECRET: 's3cr3t', MY_SECRET_PREVIOUS: 'old', JSON_SECRET: '{"user":"u","n":1}', APP_TOKEN: 'tok' },
  }

  it('resolves resource names uppercased with - as _', () => {
    expect(kitFor({ vault }).kit.vault.get('{vault://env/my-secret}')).toBe('s3cr3t')
  })

  it('applies the prefix option and version 2 as _PREVIOUS', () => {
    const { kit } = kitFor({ vault })
    expect(kit.vault.get('{vault://env/token?prefix=app_}')).toBe('tok')
    expect(kit.vault.get('{vault://env/my-secret#2}')).toBe('old')
  })

  it('reads a key of a JSON secret', () => {
    const { kit } = kitFor({ vault })
    expect(kit.vault.get('{vault://env/json-secret/user}')).toBe('u')
    expect(toList(kit.vault.get('{vault://env/json-secret/none}'))).toEqual([
      undefined,
      'could not get value from external vault (could not get subfield value: subfield none not found in JSON secret)',
    ])
    expect(toList(kit.vault.get('{vault://env/json-secret/n}'))).toEqual([
      undefined,
      'could not get value from external vault (could not get subfield value: unexpected number value in JSON secret for subfield n)',
    ])
  })

  it('reports unknown vaults and missing values', () => {
    const { kit } = kitFor({ vault })
    expect(toList(kit.vault.get('{vault://aws/x}'))).toEqual([undefined, 'could not find vault (aws)'])
    expect(toList(kit.vault.get('{vault://env/absent}'))).toEqual([
      undefined,
      'could not get value from external vault (no value found)',
    ])
  })

  it('update resolves $refs into the options', () => {
    const { kit } = kitFor({ vault })
    expect(kit.vault.update({ password: 'stale', $refs: { password: '{vault://env/my-secret}' } })).toEqual({
      password: 's3cr3t',
      $refs: { password: '{vault://env/my-secret}' },
    })
  })

  it("update resolves the references of a map's or an array's elements; one that fails becomes '' and is warned of", () => {
    const { kit, ctx } = kitFor({ vault })
    const options = {
      headers: { a: 'one', b: 'stale' },
      tags: ['stale', 'two'],
      gone: 'stale',
      $refs: {
        headers: { b: '{vault://env/my-secret}' },
        tags: { 1: '{vault://env/my-secret}' },
        gone: '{vault://env/absent}',
      },
    }
    expect(kit.vault.update(options)).toMatchObject({
      headers: { a: 'one', b: 's3cr3t' },
      tags: ['s3cr3t', 'two'],
      gone: '',
    })
    expect(ctx.logs.map((l) => l.line).join('\n')).toContain(
      'error updating secret reference {vault://env/absent}: could not get value from external vault (no value found)',
    )
  })
})
