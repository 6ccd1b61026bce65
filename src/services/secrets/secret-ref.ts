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

/** The account a secret is filed under: "<broker> <id>". */
// URLs never hold a space, so "<broker> <id>" splits back without ambiguity.
export const account = (ref: SecretRef) => `${ref.broker} ${ref.id}`
/** The secret a filed account names. */
export const refOf = (acct: string): SecretRef => {
  const i = acct.indexOf(' ')
  return { broker: acct.slice(0, i), id: acct.slice(i + 1) }
}

/** The first line of a keychain error: @napi-rs/keyring appends its cause and a Rust backtrace. */
export const firstLine = (err: unknown) => ((err as Error).message ?? String(err)).split('\n')[0]!.trim() || 'no answer'
