import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { brokerError } from '../../errors/index.js'
import { type SecretRef, type Vault, account, firstLine, refOf } from './secret-ref.js'

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
