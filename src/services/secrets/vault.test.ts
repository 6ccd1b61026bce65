import { linkSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { FileVault, openLookupVault } from './vault.js'

const ref = { broker: 'http://localhost:3000', id: 'lookup-client-never-in-a-keychain' }

describe('openLookupVault', () => {
  it('finds a secret saved with --insecure-storage without the flag, and says where', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'broker-vault-')), 'secrets.json')
    new FileVault(file).set(ref, 's3cret')
    const vault = openLookupVault({ file })
    expect(vault.get(ref)).toBe('s3cret')
    expect(vault.kind).toBe('file')
    expect(vault.where).toBe(`${file} (the --insecure-storage file)`)
  })

  it('finds nothing for an id kept nowhere', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'broker-vault-')), 'secrets.json')
    new FileVault(file).set({ ...ref, id: 'another' }, 'x')
    expect(openLookupVault({ file }).get(ref)).toBeUndefined()
  })

  it('never saves: saving stays with --save-secret and the keychain or --insecure-storage', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'broker-vault-')), 'secrets.json')
    new FileVault(file).set({ ...ref, id: 'another' }, 'x')
    expect(() => openLookupVault({ file }).set(ref, 'y')).toThrow()
  })
})

describe('FileVault', () => {
  it('writes a new 0600 file and renames it: never into a file that was there (or a link to one)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-vault-'))
    const file = join(dir, 'secrets.json')
    // A world-readable file, with a second name: writing into it would show the secret through both.
    writeFileSync(file, '{}\n', { mode: 0o644 })
    linkSync(file, join(dir, 'other-name'))
    new FileVault(file).set(ref, 's3cret')
    expect(readFileSync(join(dir, 'other-name'), 'utf8')).toBe('{}\n')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(new FileVault(file).get(ref)).toBe('s3cret')
    expect(readdirSync(dir).sort()).toEqual(['other-name', 'secrets.json'])
  })
})
