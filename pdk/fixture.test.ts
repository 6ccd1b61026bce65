import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { FixtureError, jsonPath, loadFixture } from './fixture.js'

const dir = mkdtempSync(join(tmpdir(), 'pdk-fixture-'))
const write = (name: string, text: string) => {
  const file = join(dir, name)
  writeFileSync(file, text)
  return file
}
const failure = (file: string) => {
  try {
    loadFixture(file)
  } catch (e) {
    return e as FixtureError
  }
  throw new Error('expected the fixture to be refused')
}
const base = { name: 'n', request: { url: 'http://h/' }, plugins: [] as unknown[] }

describe('fixture loading', () => {
  it('accepts a minimal fixture', () => {
    expect(loadFixture(write('ok.json', JSON.stringify(base))).fixture.name).toBe('n')
  })

  it('names the file for unreadable and non-JSON files', () => {
    expect(failure(join(dir, 'missing.json')).message).toMatch(/missing\.json: \$: cannot be read \(ENOENT\)/)
    expect(failure(write('bad.json', '{nope')).message).toMatch(/bad\.json: \$: is not valid JSON/)
  })

  it('says where invalid JSON is by line and column, not by character position', () => {
    const e = failure(write('lines.json', '{\n  "name": "n",\n  "request": {"url": "http://h/",}\n}\n'))
    expect(e.message).toContain(
      'lines.json: $: is not valid JSON (Expected double-quoted property name at line 3, column 34)',
    )
    expect(e.message).not.toMatch(/position/)
  })

  it('gives the JSON path of a bad field deep in a script', () => {
    const f = write(
      'deep.json',
      JSON.stringify({ ...base, plugins: [{ name: 'p', phases: { access: [{ call: 'x' }, { call: 5 }] } }] }),
    )
    const e = failure(f)
    expect(e.path).toBe('$.plugins[0].phases.access[1].call')
    expect(e.message).toContain('deep.json: $.plugins[0].phases.access[1].call: must be string')
  })

  it('names unknown fields, missing fields, bad phases and bad enums', () => {
    expect(failure(write('u.json', JSON.stringify({ ...base, extra: 1 }))).path).toBe('$.extra')
    expect(failure(write('m.json', JSON.stringify({ name: 'n', plugins: [] }))).path).toBe('$.request')
    const phase = failure(write('p.json', JSON.stringify({ ...base, plugins: [{ name: 'p', phases: { acces: [] } }] })))
    expect(phase.path).toBe('$.plugins[0].phases.acces')
    expect(phase.message).toContain('is not a valid name here (must be one of "init_worker"')
    expect(failure(write('s.json', JSON.stringify({ ...base, subsystem: 'udp' }))).message).toContain(
      '$.subsystem: must be one of "http", "stream"',
    )
  })

  it('takes the client TLS chain as a PEM string or as {client_certificate_chain}, and HTTP/0.9 to HTTP/3', () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
    for (const tls of [pem, { client_certificate_chain: pem }]) {
      expect(
        loadFixture(write('tls.json', JSON.stringify({ ...base, request: { url: 'https://h/', tls } }))).fixture.request
          .tls,
      ).toEqual(tls)
    }
    for (const http_version of [0.9, 1, 1.1, 2, 3, null]) {
      expect(() =>
        loadFixture(write('v.json', JSON.stringify({ ...base, request: { url: 'http://h/', http_version } }))),
      ).not.toThrow()
    }
    expect(failure(write('t.json', JSON.stringify({ ...base, request: { url: 'https://h/', tls: 5 } }))).path).toBe(
      '$.request.tls',
    )
  })

  it('turns JSON pointers into JSON paths', () => {
    expect(jsonPath('/a/0/b~1c')).toBe('$.a[0]["b/c"]')
  })
})
