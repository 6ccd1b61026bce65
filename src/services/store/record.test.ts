import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { buildRecord, presetOf } from './record.js'

describe('buildRecord', () => {
  it('names the flow preset or provider a mistyped --flow was meant to be', () => {
    expect(() => buildRecord({ flow: 'oauth2-33' })).toThrow(
      'Unknown flow or provider "oauth2-33". Did you mean "oauth2-3"?',
    )
    expect(() => buildRecord({ flow: 'githib' })).toThrow('Did you mean "github"?')
    expect(() => buildRecord({ flow: 'nothing-like-any' })).toThrow(
      /^Unknown flow or provider "nothing-like-any"\. Known flows/,
    )
  })

  it('layers the file, the preset, --field pairs and flags, in that order', () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-record-'))
    writeFileSync(
      join(dir, 'r.json'),
      JSON.stringify({ auth_leg: 9, client_id: 'file', scope: 'a', state: 'file-state' }),
    )
    const record = buildRecord({
      flow: 'oauth2-3',
      file: 'r.json',
      cwd: dir,
      pairs: ['scope=b', 'prompt=consent'],
      fields: { state: 'flag-state', client_secret: undefined },
    })
    expect(record).toEqual({
      auth_version: '2',
      auth_leg: '3',
      client_id: 'file',
      scope: 'b',
      prompt: 'consent',
      state: 'flag-state',
    })
  })

  it('says where a --file record is not JSON, by line and column', () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-record-'))
    writeFileSync(join(dir, 'r.json'), '{\n  "client_id": "a"\n  "scope": "b"\n}\n')
    expect(() => buildRecord({ flow: 'oauth2-3', file: 'r.json', cwd: dir })).toThrow(/at line 3, column 3/)
  })

  it('refuses a record that names no flow', () => {
    expect(() => buildRecord({ fields: { client_id: 'x' } })).toThrow(/Say which flow to store/)
  })

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'refuses --flow %s: an Object built-in is no preset',
    (flow) => {
      expect(() => buildRecord({ flow, fields: { client_id: 'x' } })).toThrow(/UNKNOWN|unknown|not a flow/i)
    },
  )

  it('refuses a --field without =', () => {
    expect(() => buildRecord({ flow: 'oauth2-2', pairs: ['oops'] })).toThrow(/name=value/)
  })

  it('finds the preset of a file record from its auth_* fields', () => {
    expect(
      presetOf({ auth_type: 'oauth', auth_version: '2', auth_leg: '2', grant_type: 'refresh_token' })?.required,
    ).toContain('refresh_token')
    expect(presetOf({ auth_type: 'oauth', auth_version: '1', auth_leg: '3' })?.browser).toBe(true)
  })
})
