import { Entry, findCredentials } from '@napi-rs/keyring'
import { brokerError } from '../../errors/index.js'
import { type SecretRef, type Vault, account, firstLine, refOf } from './secret-ref.js'

/** The keychain service name every broker secret is filed under. */
export const KEYCHAIN_SERVICE = 'broker-cli'

/** Runs a keychain call; a refusal (locked, no default collection, no service) is KEYCHAIN_UNAVAILABLE. */
function keychain<T>(doing: { action: 'read' | 'save' | 'delete' | 'list'; id?: string }, call: () => T): T {
  try {
    return call()
  } catch (err) {
    throw brokerError('keychainRefused', { ...doing, reason: firstLine(err) })
  }
}

/** The OS keychain through @napi-rs/keyring (Secret Service, macOS Keychain, Windows Credential Manager). */
export class KeychainVault implements Vault {
  readonly kind = 'keychain' as const
  readonly where = 'the OS keychain'

  get(ref: SecretRef): string | undefined {
    return keychain(
      { action: 'read', id: ref.id },
      () => new Entry(KEYCHAIN_SERVICE, account(ref)).getPassword() ?? undefined,
    )
  }

  set(ref: SecretRef, secret: string): void {
    keychain({ action: 'save', id: ref.id }, () => new Entry(KEYCHAIN_SERVICE, account(ref)).setPassword(secret))
  }

  delete(ref: SecretRef): boolean {
    return keychain({ action: 'delete', id: ref.id }, () =>
      new Entry(KEYCHAIN_SERVICE, account(ref)).deleteCredential(),
    )
  }

  list(): SecretRef[] {
    return keychain({ action: 'list' }, () => findCredentials(KEYCHAIN_SERVICE).map((c) => refOf(c.account)))
  }
}

/** Whether a keychain answers here; a headless Linux without a Secret Service does not. */
export function probeKeychain(): { ok: true } | { ok: false; reason: string } {
  try {
    findCredentials(KEYCHAIN_SERVICE)
    return { ok: true }
  } catch (err) {
    return { ok: false, reason: firstLine(err) }
  }
}
