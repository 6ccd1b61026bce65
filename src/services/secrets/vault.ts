import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { Entry, findCredentials } from '@napi-rs/keyring'
import { brokerError } from '../../errors/index.js'

/** The keychain service name every broker secret is filed under. */
export const KEYCHAIN_SERVICE = 'broker-cli'

/** One kept secret: which broker and which client id / consumer key it belongs to. */
export interface SecretRef {
  broker: string
  id: string
}

/** Where secrets are kept: the OS keychain, or (only with --insecure-storage) a 0600 file. */
export interface Vault {
  readonly kind: 'keychain' | 'file'
  /** Human words for where it is: "the OS keychain" or the file's path. */
  readonly where: string
  get(ref: SecretRef): string | undefined
  set(ref: SecretRef, secret: string): void
  delete(ref: SecretRef): boolean
  list(): SecretRef[]
}

// URLs never hold a space, so "<broker> <id>" splits back without ambiguity.
const account = (ref: SecretRef) => `${ref.broker} ${ref.id}`
const refOf = (acct: string): SecretRef => {
  const i = acct.indexOf(' ')
  return { broker: acct.slice(0, i), id: acct.slice(i + 1) }
}

/** The first line of a keychain error: @napi-rs/keyring appends its cause and a Rust backtrace. */
const firstLine = (err: unknown) => ((err as Error).message ?? String(err)).split('\n')[0]!.trim() || 'no answer'

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

/** A plaintext JSON file, mode 0600: only when the user asks for it with --insecure-storage. */
export class FileVault implements Vault {
  readonly kind = 'file' as const

  constructor(readonly where: string) {}

  private read(): Record<string, string> {
    if (!existsSync(this.where)) return {}
    let data: unknown
    try {
      data = JSON.parse(readFileSync(this.where, 'utf8'))
    } catch (err) {
      throw brokerError('secretsFileUnreadable', { file: this.where, reason: firstLine(err) })
    }
    if (!data || typeof data !== 'object' || Array.isArray(data))
      throw brokerError('secretsFileNotObject', { file: this.where })
    return data as Record<string, string>
  }

  /**
   * A new file, created 0600 and exclusively (never an existing file or a link), renamed over the
   * old one: the secrets are never readable by others, not even between a write and a chmod, and a
   * failed write leaves the old file whole.
   */
  private write(data: Record<string, string>): void {
    const temp = `${this.where}.${randomBytes(6).toString('hex')}.tmp`
    try {
      mkdirSync(dirname(this.where), { recursive: true, mode: 0o700 })
      writeFileSync(temp, JSON.stringify(data, null, 2) + '\n', { mode: 0o600, flag: 'wx' })
      renameSync(temp, this.where)
    } catch (err) {
      // No temp file to remove when its folder could not be made (rmSync would throw ENOTDIR itself).
      try {
        rmSync(temp, { force: true })
      } catch {
        /* nothing was written */
      }
      throw brokerError('secretsFileUnwritable', {
        file: this.where,
        reason: (err as NodeJS.ErrnoException).code ?? firstLine(err),
      })
    }
  }

  get(ref: SecretRef): string | undefined {
    return this.read()[account(ref)]
  }

  set(ref: SecretRef, secret: string): void {
    this.write({ ...this.read(), [account(ref)]: secret })
  }

  delete(ref: SecretRef): boolean {
    const data = this.read()
    if (!(account(ref) in data)) return false
    delete data[account(ref)]
    this.write(data)
    return true
  }

  list(): SecretRef[] {
    return Object.keys(this.read()).map(refOf)
  }
}

/** Default plaintext file for --insecure-storage: $XDG_CONFIG_HOME/broker/secrets.json. */
export function insecureFile(): string {
  return join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'broker', 'secrets.json')
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
