import { brokerError } from '../../errors/index.js'
import { normalizeBrokerUrl } from '../broker-client.js'
import { openListVaults, openVault, type SecretRef } from './vault.js'

export interface SecretsOptions {
  insecureStorage?: boolean
  /** Plaintext file for --insecure-storage. */
  file?: string
}

export interface SecretsList {
  /** Where they are kept: "the OS keychain" or the plaintext file. */
  where: string
  secrets: SecretRef[]
}

/** `broker secrets list`: which broker URL and client id / consumer key each kept secret belongs to (never the secret). */
export function listSecrets(opts: SecretsOptions & { broker?: string }): SecretsList {
  const vaults = openListVaults({ insecure: opts.insecureStorage, file: opts.file })
  const broker = opts.broker ? normalizeBrokerUrl(opts.broker) : undefined
  const seen = new Set<string>()
  const secrets = vaults
    .flatMap((v) => v.list())
    .filter(
      (ref) =>
        (!broker || ref.broker === broker) &&
        !seen.has(`${ref.broker} ${ref.id}`) &&
        seen.add(`${ref.broker} ${ref.id}`),
    )
  secrets.sort((a, b) => a.broker.localeCompare(b.broker) || a.id.localeCompare(b.id))
  const where = vaults.map((v) => (v.kind === 'file' ? `${v.where} (the --insecure-storage file)` : v.where))
  return { where: where.join(' and '), secrets }
}

export interface SecretDeleted extends SecretRef {
  where: string
}

/** `broker secrets delete`: forgets the secret of `id` at `broker`; NOT_FOUND when there is none. */
export function deleteSecret(opts: SecretsOptions & SecretRef): SecretDeleted {
  const vault = openVault({ insecure: opts.insecureStorage, file: opts.file })
  const ref = { broker: normalizeBrokerUrl(opts.broker), id: opts.id }
  if (!vault.delete(ref)) {
    throw brokerError('secretNotKept', { where: vault.where, id: ref.id, broker: ref.broker })
  }
  return { ...ref, where: vault.where }
}
