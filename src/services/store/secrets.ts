import type { FlowRecord } from '../../../flows/contract.js'
import { isBrokerError } from '../../errors/index.js'
import { openLookupVault, type Vault } from '../secrets/vault.js'
import { KEPT_SECRETS } from './fields.js'

export interface VaultOptions {
  /** The broker URL secrets are filed under. */
  broker: string
  insecure?: boolean
  /** Plaintext file for --insecure-storage (default under ~/.config/broker). */
  file?: string
  /** Progress and notices (stderr). */
  notify: (line: string) => void
}

/** The secrets a record can keep: client_secret by client_id, consumer_secret by consumer_key. */
const keptIn = (record: Readonly<FlowRecord>) =>
  KEPT_SECRETS.filter(({ id }) => record[id] !== undefined && record[id] !== '')

/**
 * Fills a missing client / consumer secret from the keychain. When no keychain answers and the
 * secret is required, says so once; the caller then asks for it (or reports it missing).
 */
export function fillKeptSecrets(record: FlowRecord, required: readonly string[], opts: VaultOptions): string[] {
  const wanted = keptIn(record).filter(({ secret }) => record[secret] === undefined || record[secret] === '')
  if (!wanted.length) return []
  let vault: Vault
  try {
    vault = openLookupVault(opts)
  } catch (err) {
    if (!isBrokerError(err)) throw err
    if (wanted.some(({ secret }) => required.includes(secret)))
      opts.notify(`${err.message} Asking for the secret instead.`)
    return []
  }
  const found: string[] = []
  for (const { id, secret } of wanted) {
    let value: string | undefined
    try {
      value = vault.get({ broker: opts.broker, id: String(record[id]) })
    } catch (err) {
      // A keychain that is there but refuses (locked, no default collection): ask instead.
      if (!isBrokerError(err)) throw err
      if (required.includes(secret)) opts.notify(`${err.message} Asking for the secret instead.`)
      continue
    }
    if (value === undefined) continue
    record[secret] = value
    found.push(secret)
    opts.notify(`Using the ${secret} kept in ${vault.where} for ${id} ${String(record[id])}.`)
  }
  return found
}

/** Keeps the record's client / consumer secrets (--save-secret) in `vault` (see openVault). */
export function saveKeptSecrets(
  record: Readonly<FlowRecord>,
  vault: Vault,
  opts: VaultOptions,
): Array<{ id: string; where: string }> {
  const present = keptIn(record).filter(({ secret }) => typeof record[secret] === 'string' && record[secret] !== '')
  return present.map(({ id, secret }) => {
    vault.set({ broker: opts.broker, id: String(record[id]) }, String(record[secret]))
    const where = vault.kind === 'file' ? `${vault.where} (plaintext, mode 0600)` : vault.where
    opts.notify(`Saved the ${secret} for ${String(record[id])} in ${where}.`)
    return { id: String(record[id]), where }
  })
}
