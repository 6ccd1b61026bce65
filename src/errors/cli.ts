/** What only the CLI says: a command line that cannot work, a prompt cancelled, no keychain, no broker to talk to. No HTTP status: no request is ever answered with one. */
import { type ErrorSpec, type MessageSpec } from './spec.js'

export const CLI_ERRORS = {
  USAGE: { exit: 2 },
  BROKER_UNREACHABLE: {
    exit: 1,
    next: 'Start one with `broker serve`, or point --broker (BROKER_URL) at a running broker.',
  },
  MISSING_FIELDS: {
    exit: 2,
    next: 'Pass them with the flags named above, or run the command in a terminal (without --json) to be asked for them.',
  },
  CAPTURE_TIMEOUT: {
    exit: 1,
    next: 'Open the start URL sooner (or use --open), or raise store.expire on the broker.',
  },
  UNKNOWN_PROVIDER: {
    exit: 2,
    next: 'Use one of the known providers, or describe yours in a JSON file and pass --preset-file.',
  },
  CANCELLED: { exit: 1, next: 'Run the command again, or pass the fields as flags.' },
  KEYCHAIN_UNAVAILABLE: {
    exit: 1,
    next: 'Unlock or start your keychain (Secret Service on Linux), or pass --insecure-storage to keep secrets in a 0600 file.',
  },
} as const satisfies Record<string, ErrorSpec & { readonly status?: never }>

/** The messages of these codes, as templates (see index.ts). */
export const CLI_MESSAGES = {
  // USAGE: a CLI invocation that cannot work as given.
  /** oclif's parse error, already put on one line. */
  cliUsage: { code: 'USAGE', text: (v: { message: string }) => v.message },
  walkNeedsUrl: {
    code: 'USAGE',
    text: (v: { url: string }) => `walk needs an absolute http(s) URL (got "${v.url}").`,
  },
  walkHttpOnly: { code: 'USAGE', text: (v: { url: string }) => `walk follows http(s) URLs only (got "${v.url}").` },
  brokerUrlInvalid: {
    code: 'USAGE',
    text: (v: { url: string; example: string }) =>
      `--broker (or BROKER_URL) must be an http(s) URL such as ${v.example} (got "${v.url}").`,
  },
  hostInvalid: { code: 'USAGE', text: (v: { problem: string }) => `-h/--host: ${v.problem}.` },
  portInUse: { code: 'USAGE', text: (v: { port: number }) => `Port ${v.port} is in use; pick another with --port.` },
  presetUnreadable: {
    code: 'USAGE',
    text: (v: { file: string; reason: string }) => `Cannot read the provider preset ${v.file}: ${v.reason}.`,
  },
  presetInvalid: {
    code: 'USAGE',
    text: (v: { file: string; field: string; problem: string }) =>
      `The provider preset ${v.file} is invalid: ${v.field || '(top)'} ${v.problem}.`,
  },
  hashCheckNeedsHash: { code: 'USAGE', text: 'hash-check needs the hash that `broker store` printed.' },
  captureWithCallback: {
    code: 'USAGE',
    text: '--capture listens for the result itself; leave out --callback (or drop --capture).',
  },
  captureSigningFlow: {
    code: 'USAGE',
    text: 'oauth1-1 signs requests on demand and delivers nothing to capture: store it without --capture, then POST /sign with its hash and the request to sign.',
  },
  unknownFlowPreset: {
    code: 'USAGE',
    text: (v: { flow: string; known: readonly string[]; suggestion?: string }) =>
      `Unknown flow or provider "${v.flow}".${v.suggestion ? ` Did you mean "${v.suggestion}"?` : ''} Known flows: ${v.known.join(', ')}; providers: broker store --list-providers.`,
  },
  fieldPairInvalid: { code: 'USAGE', text: (v: { pair: string }) => `--field takes name=value (got "${v.pair}").` },
  flowNotNamed: {
    code: 'USAGE',
    text: (v: { known: readonly string[] }) =>
      `Say which flow to store: --flow ${v.known.join('|')}, or auth_version/auth_leg in --file.`,
  },
  recordFileUnreadable: {
    code: 'USAGE',
    text: (v: { file: string; reason: string }) => `Cannot read --file ${v.file}: ${v.reason}.`,
  },
  recordFileNotJson: {
    code: 'USAGE',
    text: (v: { file: string; reason: string }) => `--file ${v.file} is not JSON: ${v.reason}.`,
  },
  recordFileNotObject: {
    code: 'USAGE',
    text: (v: { file: string }) => `--file ${v.file} must hold one JSON object of record fields.`,
  },
  dashboardNeedsTty: { code: 'USAGE', text: 'broker dashboard needs a terminal: stdin is not a TTY.' },
  attachNeedsAdminKey: {
    code: 'USAGE',
    text: '--attach needs the admin key the broker was started with: --admin-key, BROKER_ADMIN_KEY or admin.key in the config.',
  },
  noAdminApi: {
    code: 'USAGE',
    text: (v: { url: string }) =>
      `The broker at ${v.url} has no admin API: start it with --admin-key (admin.key, BROKER_ADMIN_KEY) to attach.`,
  },
  adminKeyRefused: {
    code: 'USAGE',
    text: (v: { url: string }) =>
      `The broker at ${v.url} refused the admin key: pass the one it was started with (--admin-key or BROKER_ADMIN_KEY).`,
  },
  brokerUnreachable: {
    code: 'BROKER_UNREACHABLE',
    text: (v: { url: string; cause: string }) => `No broker answers at ${v.url} (${v.cause}).`,
    details: (v: { url: string }) => ({ url: v.url }),
  },
  missingFields: {
    code: 'MISSING_FIELDS',
    text: (v: { missing: ReadonlyArray<{ field: string; flag: string }> }) =>
      `Missing required field${v.missing.length > 1 ? 's' : ''}: ${v.missing.map((m) => `${m.field} (${m.flag})`).join(', ')}.`,
    details: (v: { missing: ReadonlyArray<{ field: string; flag: string }> }) => ({
      fields: Object.fromEntries(v.missing.map((m) => [m.field, 'is required'])),
    }),
  },
  captureTimeout: {
    code: 'CAPTURE_TIMEOUT',
    text: (v: { seconds: number; port: number }) =>
      `Nobody opened the start URL within ${v.seconds} s, the stored record's lifetime (store.expire): nothing reached http://127.0.0.1:${v.port}/callback.`,
  },
  captureLoginTimeout: {
    code: 'CAPTURE_TIMEOUT',
    text: (v: { port: number }) =>
      `The start URL was opened, but the login at the provider did not come back before the flow expired (store.callbackWait): nothing reached http://127.0.0.1:${v.port}/callback.`,
    next: 'Run broker store again and finish the login sooner, or raise store.callbackWait on the broker.',
  },
  captureNotDelivered: {
    code: 'CAPTURE_TIMEOUT',
    text: (v: { progress: string; port: number }) =>
      `The flow ended at the broker (${v.progress}), but nothing reached http://127.0.0.1:${v.port}/callback.`,
    next: 'See what the flow did with `broker hash-check <hash>`, and run broker store again.',
  },
  // --- issue 25 (device flow, RFC 8628) ---
  deviceTimeout: {
    code: 'CAPTURE_TIMEOUT',
    text: (v: { seconds: number }) =>
      `Nobody entered the user code within ${v.seconds} s, the device code's lifetime; run broker store again for a new code.`,
  },
  // --- end issue 25 ---
  unknownProvider: {
    code: 'UNKNOWN_PROVIDER',
    text: (v: { name?: string; known: readonly string[]; suggestion?: string }) =>
      `${v.name ? `Unknown provider "${v.name}"` : 'No provider given'}.${v.suggestion ? ` Did you mean "${v.suggestion}"?` : ''} Known providers: ${v.known.join(', ')}.`,
    details: (v: { known: readonly string[] }) => ({ known: v.known }),
  },
  cancelled: {
    code: 'CANCELLED',
    text: (v: { field: string }) => `Cancelled at the ${v.field} prompt; nothing was stored.`,
  },
  keychainRefused: {
    code: 'KEYCHAIN_UNAVAILABLE',
    text: (v: { action: 'read' | 'save' | 'delete' | 'list'; id?: string; reason: string }) =>
      `The OS keychain refused to ${v.action === 'list' ? 'list its secrets' : `${v.action} the secret for ${v.id}`} (${v.reason}).`,
  },
  noKeychain: {
    code: 'KEYCHAIN_UNAVAILABLE',
    text: (v: { reason: string }) => `No keychain answers here (${v.reason}).`,
  },
} as const satisfies Record<string, MessageSpec>
