import { existsSync } from 'node:fs'
import { brokerError } from '../../errors/index.js'
import { FileVault, insecureFile } from './file-vault.js'
import { KeychainVault, probeKeychain } from './keychain.js'
import type { Vault } from './secret-ref.js'

/**
 * Opening the place secrets are kept: the OS keychain (keychain.ts) when it answers, the 0600 file of
 * --insecure-storage (file-vault.ts) when asked for or found.
 */
export type { SecretRef, Vault } from './secret-ref.js'
export { FileVault } from './file-vault.js'

/**
 * The vault to use: the keychain when it answers; else the 0600 file with `insecure`; else
 * KEYCHAIN_UNAVAILABLE naming why, for the caller to report (or to fall back to prompting).
 */
export function openVault(opts: { insecure?: boolean; file?: string } = {}): Vault {
  const probe = probeKeychain()
  if (probe.ok) return new KeychainVault()
  if (opts.insecure) return new FileVault(opts.file ?? insecureFile())
  throw brokerError('noKeychain', { reason: probe.reason })
}

/**
 * The vaults `broker secrets list` reads: the keychain when it answers, and the --insecure-storage
 * file when asked for or when it exists (as `broker store` finds a secret there without the flag).
 * Throws KEYCHAIN_UNAVAILABLE, as openVault does, when neither is there.
 */
export function openListVaults(opts: { insecure?: boolean; file?: string } = {}): Vault[] {
  const file = opts.file ?? insecureFile()
  const probe = probeKeychain()
  const vaults: Vault[] = probe.ok ? [new KeychainVault()] : []
  if (opts.insecure || existsSync(file)) vaults.push(new FileVault(file))
  if (!vaults.length) throw brokerError('noKeychain', { reason: probe.ok ? 'no keychain' : probe.reason })
  return vaults
}

/**
 * The vault to look a secret up in, without writing: the keychain first (when it answers), then
 * the --insecure-storage file when one exists, so a secret saved with --insecure-storage is found
 * by a later run without the flag. `where` names the place the last found secret came from.
 * Throws KEYCHAIN_UNAVAILABLE, as openVault does, when neither is there.
 */
export function openLookupVault(opts: { insecure?: boolean; file?: string } = {}): Vault {
  const file = opts.file ?? insecureFile()
  const places: Vault[] = []
  const probe = probeKeychain()
  if (probe.ok) places.push(new KeychainVault())
  if (opts.insecure || existsSync(file)) places.push(new FileVault(file))
  if (!places.length) throw brokerError('noKeychain', { reason: probe.ok ? 'no keychain' : probe.reason })
  let last = places[0]!
  return {
    get kind() {
      return last.kind
    },
    get where() {
      return last.kind === 'file' ? `${last.where} (the --insecure-storage file)` : last.where
    },
    get(ref) {
      let refused: unknown
      for (const place of places) {
        try {
          const secret = place.get(ref)
          if (secret === undefined) continue
          last = place
          return secret
        } catch (err) {
          refused ??= err
        }
      }
      if (refused) throw refused
      return undefined
    },
    set: () => {
      throw new Error('a lookup vault does not save')
    },
    delete: () => false,
    list: () => places.flatMap((place) => place.list()),
  }
}
