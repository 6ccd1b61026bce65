import { mkdtempSync } from 'node:fs'
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
