/**
 * The one registry of errors. `ERRORS` holds each code's HTTP status, exit code and next step;
 * `MESSAGES` holds every message as a template under an id, so a throw site names the message
 * and passes values (`throw brokerError('pluginMissing', { plugin })`), never prose. The CLI and
 * the HTTP server render both from here, so a code means the same everywhere.
 */
export interface ErrorSpec {
  /** HTTP status when the error reaches an HTTP client. */
  readonly status: number
  /** CLI exit code: 2 for bad input or usage, 1 for a failure. */
  readonly exit: 1 | 2
  /** What the user can do next; shown by the CLI under the message. */
  readonly next?: string
}

export const ERRORS = {
  VALIDATION: { status: 400, exit: 2, next: 'Fix the fields named above and send the request again.' },
  CONFIG_INVALID: {
    status: 500,
    exit: 2,
    next: 'Fix the configuration key named above; `broker serve --help` lists every option.',
  },
  USAGE: { status: 400, exit: 2 },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, exit: 2, next: 'Send application/json or application/x-www-form-urlencoded.' },
  BODY_TOO_LARGE: { status: 413, exit: 2, next: 'Send a smaller body, or raise `body.limit` in the config.' },
  UNKNOWN_HASH: {
    status: 404,
    exit: 1,
    next: 'Store the flow again with `broker store`: hashes expire after store.expire seconds.',
  },
  UNKNOWN_STATE: { status: 400, exit: 1, next: 'Start the flow again from its start URL.' },
  UNKNOWN_RESULT: { status: 404, exit: 1, next: 'Result codes are single use and expire after store.expire seconds.' },
  PLUGIN_MISSING: {
    status: 404,
    exit: 2,
    next: 'Check auth_type, auth_flow, auth_version and auth_leg, or add the plugin to plugins.dir.',
  },
  PLUGIN_INVALID: {
    status: 500,
    exit: 1,
    next: 'A flow plugin must export start(ctx); see the README section on flow plugins.',
  },
  CALLBACK_NOT_ALLOWED: {
    status: 400,
    exit: 2,
    next: 'Add the callback origin or URL prefix to `callbacks.allow` in the broker config.',
  },
  DELIVERY_NOT_ALLOWED: { status: 400, exit: 2, next: 'Use one of the delivery modes in `delivery.allow`.' },
  FLOW_STARTED: { status: 409, exit: 1, next: 'A start URL works once; store the flow again to start over.' },
  FLOW_FINISHED: { status: 409, exit: 1, next: 'This flow is over; store a new one.' },
  COOKIE_MISMATCH: { status: 403, exit: 1, next: 'Finish the flow in the browser that opened its start URL.' },
  PROVIDER_ERROR: {
    status: 502,
    exit: 1,
    next: 'Check the provider URLs and client credentials of the stored record.',
  },
  PLUGIN_SERVER_UNAVAILABLE: {
    status: 502,
    exit: 2,
    next: 'Check that the plugin loads in the server (its output is quoted above), or run without --plugin-server.',
  },
  PROVIDER_TIMEOUT: {
    status: 504,
    exit: 1,
    next: 'The provider did not answer in time; raise `provider.timeout` or try again.',
  },
  STORE_UNAVAILABLE: {
    status: 503,
    exit: 1,
    next: 'Check that Redis answers at store.host:store.port, or use store.driver memory.',
  },
  UNAUTHORIZED: { status: 401, exit: 1 },
  NOT_FOUND: { status: 404, exit: 1 },
  BROKER_UNREACHABLE: {
    status: 502,
    exit: 1,
    next: 'Start one with `broker serve`, or point --broker (BROKER_URL) at a running broker.',
  },
  FAILED: { status: 500, exit: 1 },
  INTERNAL: { status: 500, exit: 1 },
  FIXTURE_INVALID: {
    status: 400,
    exit: 2,
    next: 'Fix the field named above; the README\'s "Fixture format" section (schema: pdk/fixture.schema.json in the package) describes every field.',
  },
  MISSING_FIELDS: {
    status: 400,
    exit: 2,
    next: 'Pass them with the flags named above, or run the command in a terminal to be asked for them.',
  },
  CAPTURE_TIMEOUT: {
    status: 504,
    exit: 1,
    next: 'Open the start URL sooner (or use --open), or raise store.expire on the broker.',
  },
  UNKNOWN_PROVIDER: {
    status: 400,
    exit: 2,
    next: 'Use one of the known providers, or describe yours in a JSON file and pass --preset-file.',
  },
  CANCELLED: { status: 400, exit: 1, next: 'Run the command again, or pass the fields as flags.' },
  KEYCHAIN_UNAVAILABLE: {
    status: 503,
    exit: 1,
    next: 'Unlock or start your keychain (Secret Service on Linux), or pass --insecure-storage to keep secrets in a 0600 file.',
  },
  PROVIDER_NOT_ALLOWED: {
    status: 400,
    exit: 2,
    next: "Name the provider's origin in `providers.allow` in the broker config, or use its public address.",
  },
  CROSS_SITE: {
    status: 403,
    exit: 1,
    next: 'Store flows and redeem results from your server (or `broker store`), not from a web page.',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    exit: 1,
    next: 'Send the whole request within server.requestTimeout milliseconds.',
  },
  SHUTTING_DOWN: { status: 503, exit: 1, next: 'Send the request again: another worker or instance takes it.' },
  HEADERS_TOO_LARGE: { status: 431, exit: 1, next: 'Send fewer or smaller headers.' },
  RATE_LIMITED: {
    status: 429,
    exit: 1,
    next: 'Wait for the Retry-After seconds, or raise rate.store / rate.start in the broker config.',
  },
} as const satisfies Record<string, ErrorSpec>

export type ErrorCode = keyof typeof ERRORS

/** Extras a message adds to the JSON body, e.g. the fields that failed validation. */
export type Details = Readonly<Record<string, unknown>>

export interface MessageSpec {
  readonly code: ErrorCode
  /** The message: a sentence, or a template that builds it from the throw site's values. */
  readonly text: string | ((values: never) => string)
  /** Extras for the JSON body: fixed, or built from the same values. */
  readonly details?: Details | ((values: never) => Details)
  /** The next step when this message needs another than its code's (shown by the CLI only). */
  readonly next?: string
}

/** `name problem; name problem` for a fields map. */
const listFields = (fields: Readonly<Record<string, string>>) =>
  Object.entries(fields)
    .map(([k, v]) => `${k} ${v}`)
    .join('; ')

const noFields = { fields: {} } as const

/** Every message a BrokerError can carry, grouped by code in the order of `ERRORS`. */
export const MESSAGES = {
  // VALIDATION: a request the HTTP API refuses; `fields` names what was wrong.
  hashRequired: {
    code: 'VALIDATION',
    text: 'The hash query parameter is required.',
    details: { fields: { hash: 'is required' } },
  },
  notSigningFlow: {
    code: 'VALIDATION',
    text: (v: { plugin: string }) =>
      `The flow "${v.plugin}" is not a signing flow; POST /sign takes the hash of an oauth_1_1-legged or oauth_echo_1 record.`,
    details: { fields: { hash: 'is not the hash of a signing flow' } },
  },
  resultRequired: {
    code: 'VALIDATION',
    text: 'The result code is required (field "result" or "code").',
    details: { fields: { result: 'is required' } },
  },
  recordNotObject: {
    code: 'VALIDATION',
    text: 'The body must be an object of record fields (JSON or form-encoded).',
    details: noFields,
  },
  tooManyFields: {
    code: 'VALIDATION',
    text: (v: { max: number }) => `A record has at most ${v.max} fields.`,
    details: noFields,
  },
  invalidRecord: {
    code: 'VALIDATION',
    text: (v: { fields: Record<string, string> }) => `Invalid record: ${listFields(v.fields)}.`,
    details: (v: { fields: Record<string, string> }) => ({ fields: v.fields }),
  },
  jsonTooDeep: {
    code: 'VALIDATION',
    text: (v: { depth: number }) => `The JSON body nests deeper than ${v.depth} levels.`,
    details: noFields,
  },
  invalidJson: { code: 'VALIDATION', text: 'The body is not valid JSON.', details: noFields },
  contentLengthMismatch: {
    code: 'VALIDATION',
    text: 'The Content-Length header does not match the body.',
    details: noFields,
  },
  /** A request that fails a route's JSON schema; `part` is Fastify's validation context (body, querystring …). */
  invalidRequest: {
    code: 'VALIDATION',
    text: (v: { part?: string; fields: Record<string, string> }) =>
      `Invalid ${v.part ?? 'request'}: ${listFields(v.fields)}.`,
    details: (v: { fields: Record<string, string> }) => ({ fields: v.fields }),
  },
  /** Any other client error Fastify raises, in its own words. */
  badRequest: { code: 'VALIDATION', text: (v: { message: string }) => v.message, details: noFields },

  // CONFIG_INVALID
  configUnreadable: {
    code: 'CONFIG_INVALID',
    text: (v: { file: string }) => `Cannot read the config file ${v.file}: it does not exist or is not readable.`,
    details: (v: { file: string }) => ({ file: v.file }),
    next: 'Check the path given to -c/--config (relative to the current directory), or leave -c out to use ./config/default.js or the built-in defaults.',
  },
  configLoadFailed: {
    code: 'CONFIG_INVALID',
    text: (v: { file: string; reason: string }) => `Cannot load the config file ${v.file}: ${v.reason}`,
    details: (v: { file: string }) => ({ file: v.file }),
  },
  configNotObject: {
    code: 'CONFIG_INVALID',
    text: (v: { file: string }) =>
      `The config file ${v.file} must export an object (export default {…} or module.exports = {…}).`,
    details: (v: { file: string }) => ({ file: v.file }),
  },
  /** Every problem on its own line; `key` is the first key named. */
  configInvalid: {
    code: 'CONFIG_INVALID',
    text: (v: { problems: readonly string[] }) => `Invalid configuration:\n  ${v.problems.join('\n  ')}`,
    details: (v: { key?: string }) => ({ key: v.key }),
  },
  pidFileUnwritable: {
    code: 'CONFIG_INVALID',
    text: (v: { file: string; reason: string }) => `Cannot write the pid file ${v.file} (pid.dir): ${v.reason}`,
    details: { key: 'pid.dir' },
  },
  pidFileInUse: {
    code: 'CONFIG_INVALID',
    text: (v: { file: string; pid: number }) => `The pid file ${v.file} belongs to a running broker (pid ${v.pid}).`,
    details: { key: 'pid.dir' },
    next: 'Stop that broker first, or start this one with another --port or --pid-dir.',
  },
  sharedSecretsMissing: {
    code: 'CONFIG_INVALID',
    text: (v: { missing: readonly string[]; shared: 'cluster' | 'sentinels' }) =>
      `${v.missing.join(' and ')} must be set when several broker instances share the store (store.${v.shared}): set the same values on every instance (BROKER_COOKIE_SECRET, BROKER_SESSION_SECRET).`,
    details: (v: { missing: readonly string[] }) => ({ key: v.missing[0] }),
  },

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
    text: (v: { flow: string; known: readonly string[] }) =>
      `Unknown flow or provider "${v.flow}"; known flows: ${v.known.join(', ')}; providers: broker store --list-providers.`,
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

  unsupportedMediaType: {
    code: 'UNSUPPORTED_MEDIA_TYPE',
    text: 'Unsupported content type; send application/json or application/x-www-form-urlencoded.',
  },
  bodyTooLarge: { code: 'BODY_TOO_LARGE', text: 'The request body is larger than this broker accepts.' },
  unknownHash: { code: 'UNKNOWN_HASH', text: 'No flow is stored under this hash: it expired or never existed.' },

  callbackWithoutState: { code: 'UNKNOWN_STATE', text: 'The callback carries neither state nor oauth_token.' },
  stateNotIssued: { code: 'UNKNOWN_STATE', text: 'The state parameter was not issued by this broker.' },
  noFlowWaits: { code: 'UNKNOWN_STATE', text: 'No flow waits for this callback: it expired or never existed.' },

  unknownResult: {
    code: 'UNKNOWN_RESULT',
    text: 'No result under this code: it was redeemed already or expired.',
  },
  pluginMissing: {
    code: 'PLUGIN_MISSING',
    text: (v: { plugin: string }) => `No flow plugin named "${v.plugin}".`,
    details: (v: { plugin: string }) => ({ plugin: v.plugin }),
  },
  /** `reason`: the first line of the load error, paths already removed. */
  pluginLoadFailed: {
    code: 'PLUGIN_INVALID',
    text: (v: { plugin: string; reason: string }) => `The flow plugin "${v.plugin}" failed to load: ${v.reason}`,
    details: (v: { plugin: string }) => ({ plugin: v.plugin }),
  },
  pluginWithoutStart: {
    code: 'PLUGIN_INVALID',
    text: (v: { plugin: string }) => `The flow plugin "${v.plugin}" does not export a start(ctx) function.`,
    details: (v: { plugin: string }) => ({ plugin: v.plugin }),
  },

  callbackNotAllowed: {
    code: 'CALLBACK_NOT_ALLOWED',
    text: (v: { callback: string }) => `The callback ${v.callback} is not in callbacks.allow.`,
    details: { field: 'callback' },
  },
  callbackNotLoopback: {
    code: 'CALLBACK_NOT_ALLOWED',
    text: (v: { callback: string }) =>
      `The callback ${v.callback} is not a loopback address; without callbacks.allow only localhost, 127.0.0.1 and [::1] are accepted. Set callbacks.allow (or BROKER_CALLBACKS_ALLOW) to the origins or URL prefixes of your apps.`,
    details: { field: 'callback' },
  },
  deliveryNotAllowed: {
    code: 'DELIVERY_NOT_ALLOWED',
    text: (v: { mode: string; allowed: readonly string[] }) =>
      `This broker does not allow delivery "${v.mode}"; allowed: ${v.allowed.join(', ')}.`,
    details: { field: 'delivery' },
  },

  flowStarted: { code: 'FLOW_STARTED', text: 'This flow was started already; its start URL works once.' },
  flowFinished: {
    code: 'FLOW_FINISHED',
    text: (v: { progress: 'completed' | 'failed' }) => `This flow has ${v.progress} and cannot be run again.`,
  },
  cookieMismatch: {
    code: 'COOKIE_MISMATCH',
    text: 'This callback arrived in a browser other than the one that started the flow.',
  },

  /** A provider that failed while /store checked a record (OpenID discovery); `message` names the issuer. */
  providerFailedAtStore: { code: 'PROVIDER_ERROR', text: (v: { message: string }) => v.message },
  providerTimeoutAtStore: { code: 'PROVIDER_TIMEOUT', text: (v: { message: string }) => v.message },
  /** The provider policy refused an address /store reached for (an issuer resolving to an internal address). */
  providerRefusedAtStore: { code: 'PROVIDER_NOT_ALLOWED', text: (v: { message: string }) => v.message },

  storeNotAnswering: { code: 'STORE_UNAVAILABLE', text: 'The flow store is not answering; try again shortly.' },
  redisUnreachable: {
    code: 'STORE_UNAVAILABLE',
    text: (v: { store: string; reason: string }) => `Redis did not answer at ${v.store} (${v.reason}).`,
    details: (v: { store: string }) => ({ store: v.store }),
  },

  apiKeyInvalid: { code: 'UNAUTHORIZED', text: 'The API key is not valid.' },
  apiKeyRequired: {
    code: 'UNAUTHORIZED',
    text: 'This route needs an API key: send Authorization: Bearer <key> (api.keys).',
  },
  adminKeyRequired: { code: 'UNAUTHORIZED', text: 'The admin API needs Authorization: Bearer <admin.key>.' },
  /** A broker's UNAUTHORIZED answer as the CLI shows it: the broker names the header, a CLI user sets a flag. */
  apiKeyRefusedByBroker: {
    code: 'UNAUTHORIZED',
    text: (v: { message: string }) => `${v.message} Pass one of its api.keys with --api-key (or BROKER_API_KEY).`,
  },

  noRoute: {
    code: 'NOT_FOUND',
    text: (v: { method: string; path: string }) => `No route ${v.method} ${v.path}.`,
  },
  /** A command line naming no command; `suggestion` is the closest one, when one is close. */
  commandNotFound: {
    code: 'NOT_FOUND',
    text: (v: { typed: string; bin: string; suggestion?: string }) =>
      `"${v.typed}" is not a ${v.bin} command.${v.suggestion ? ` Did you mean \`${v.bin} ${v.suggestion}\`?` : ''} \`${v.bin} help\` lists every command.`,
  },
  secretNotKept: {
    code: 'NOT_FOUND',
    text: (v: { where: string; id: string; broker: string }) =>
      `No secret is kept in ${v.where} for ${v.id} at ${v.broker}; \`broker secrets list\` shows what is kept.`,
  },

  brokerUnreachable: {
    code: 'BROKER_UNREACHABLE',
    text: (v: { url: string; cause: string }) => `No broker answers at ${v.url} (${v.cause}).`,
    details: (v: { url: string }) => ({ url: v.url }),
  },

  // FAILED: a CLI command that could not finish.
  workerStartFailed: { code: 'FAILED', text: (v: { reason: string }) => `A worker could not start: ${v.reason}` },
  workerExited: {
    code: 'FAILED',
    text: (v: { how: string }) => `A worker exited before it could serve (${v.how}).`,
  },
  notABroker: {
    code: 'FAILED',
    text: (v: { url: string; status: number }) =>
      `${v.url} answered ${v.status} with something other than JSON; is it a broker?`,
  },
  /** A broker's error answer that carries no message of its own. */
  brokerAnswered: { code: 'FAILED', text: (v: { status: number }) => `The broker answered ${v.status}.` },
  adminAnswered: {
    code: 'FAILED',
    text: (v: { url: string; status: number }) => `The broker at ${v.url} answered ${v.status} to GET /admin/flows.`,
  },
  dashboardCannotListen: {
    code: 'FAILED',
    text: (v: { listen: string; port: number; reason: string }) =>
      `The embedded broker cannot listen on ${v.listen}:${v.port} (${v.reason}); pick another --port, or --attach to the broker already there.`,
  },
  /** The flow's own error as the app's callback received it. */
  flowFailed: {
    code: 'FAILED',
    text: (v: { error: string; description?: string }) =>
      `The flow failed: ${v.error}${v.description ? `: ${v.description}` : ''}.`,
    details: (v: { error: string }) => ({ error: v.error }),
  },
  flowEndedEarly: {
    code: 'FAILED',
    text: (v: { reason: string; hash: string }) =>
      `The flow ended without reaching the callback (${v.reason}); \`broker hash-check ${v.hash}\` shows why.`,
  },
  /** What went wrong in test-provider's app (the provider's API call, the redirect), in its own words. */
  providerAppFailed: { code: 'FAILED', text: (v: { message: string }) => v.message },
  secretsFileUnreadable: {
    code: 'FAILED',
    text: (v: { file: string; reason: string }) =>
      `The secrets file ${v.file} cannot be read (${v.reason}); fix or delete it.`,
  },
  secretsFileNotObject: {
    code: 'FAILED',
    text: (v: { file: string }) => `The secrets file ${v.file} is not a JSON object; fix or delete it.`,
  },
  secretsFileUnwritable: {
    code: 'FAILED',
    text: (v: { file: string; reason: string }) => `Cannot write the secrets file ${v.file} (${v.reason}).`,
  },

  // INTERNAL: a bug or an impossible state; the HTTP API logs the error and says only this.
  unexpected: { code: 'INTERNAL', text: 'The broker failed unexpectedly; the error was logged.' },
  /** An unexpected error in a CLI command: the first line of its message (the stack only under BROKER_VERBOSE). */
  unexpectedInCli: { code: 'INTERNAL', text: (v: { firstLine: string }) => v.firstLine || 'Unexpected error.' },
  flowExists: { code: 'INTERNAL', text: 'A flow with this hash exists already.' },

  /** FixtureError's message, which names the file and the field. */
  fixtureInvalid: {
    code: 'FIXTURE_INVALID',
    text: (v: { message: string }) => v.message,
    details: (v: { file: string; path: string }) => ({ file: v.file, path: v.path }),
  },
  /** `broker pdk run --plugin-server`: the plugin server did not start or does not serve the plugin. */
  pluginServerUnavailable: {
    code: 'PLUGIN_SERVER_UNAVAILABLE',
    text: (v: { reason: string }) => `Cannot run the plugin server: ${v.reason}.`,
  },
  /** A fixture path that is no readable file: nothing to fix inside it. */
  fixtureUnreadable: {
    code: 'FIXTURE_INVALID',
    text: (v: { message: string }) => v.message,
    details: (v: { file: string; path: string }) => ({ file: v.file, path: v.path }),
    next: 'Check the path: `broker pdk run <file or folder>` takes fixture files or folders of them, e.g. the shipped fixtures/pdk/js-hello.json.',
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
      `The flow did not finish within ${v.seconds} s, the stored record's lifetime: nothing reached http://127.0.0.1:${v.port}/callback.`,
  },
  unknownProvider: {
    code: 'UNKNOWN_PROVIDER',
    text: (v: { name?: string; known: readonly string[] }) =>
      `${v.name ? `Unknown provider "${v.name}"` : 'No provider given'}; known providers: ${v.known.join(', ')}.`,
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
  providerNotAllowed: {
    code: 'PROVIDER_NOT_ALLOWED',
    text: (v: { field: string; origin: string }) => `The ${v.field} ${v.origin} is not in providers.allow.`,
    details: (v: { field: string }) => ({ field: v.field }),
  },
  providerAddressNotAllowed: {
    code: 'PROVIDER_NOT_ALLOWED',
    text: (v: { field: string; origin: string }) =>
      `The ${v.field} ${v.origin} names an internal address (loopback, private, link-local, metadata, multicast …) that this broker does not call; name it in providers.allow to allow it.`,
    details: (v: { field: string }) => ({ field: v.field }),
  },
  /** A provider request the policy stopped at connect time; the address it resolved to is not named. */
  providerRefused: {
    code: 'PROVIDER_NOT_ALLOWED',
    text: (v: { origin: string }) =>
      `${v.origin} is not a provider this broker calls: it is not in providers.allow, or it resolves to an internal address.`,
  },
  providerUrlInvalid: { code: 'PROVIDER_NOT_ALLOWED', text: 'The provider URL is not an absolute http(s) URL.' },
  requestTokenTaken: {
    code: 'PROVIDER_ERROR',
    text: 'The provider returned a request token that another flow holds already; start the flow again.',
  },
  crossSite: {
    code: 'CROSS_SITE',
    text: (v: { path: string }) =>
      `${v.path} does not take requests from web pages of other sites (Sec-Fetch-Site or Origin says so).`,
  },
  requestTimeout: {
    code: 'REQUEST_TIMEOUT',
    text: (v: { ms: number }) => `The request did not arrive whole within ${v.ms} ms.`,
  },
  shuttingDown: { code: 'SHUTTING_DOWN', text: 'This broker worker is shutting down.' },
  headersTooLarge: { code: 'HEADERS_TOO_LARGE', text: 'The request headers are too large.' },
  rateLimited: {
    code: 'RATE_LIMITED',
    text: (v: { max: number; windowMs: number; after: string }) =>
      `Too many requests from this address: at most ${v.max} per ${v.windowMs / 1000} s; try again in ${v.after}.`,
    details: (v: { ttlMs: number }) => ({ retry_after: Math.ceil(v.ttlMs / 1000) }),
  },
} as const satisfies Record<string, MessageSpec>

export type MessageId = keyof typeof MESSAGES

type ArgOf<F> = F extends (values: infer V) => unknown ? V : unknown
type Spec<Id extends MessageId> = (typeof MESSAGES)[Id]
/** The values message `Id` needs: what its text and its details read. */
export type MessageValues<Id extends MessageId> = ArgOf<Spec<Id>['text']> &
  (Spec<Id> extends { details: infer D } ? ArgOf<D> : unknown)
/** `brokerError`'s arguments after the id: the values when the message has any, else nothing. */
export type MessageArgs<Id extends MessageId> = unknown extends MessageValues<Id> ? [] : [values: MessageValues<Id>]

// Set in BrokerError's static block, so only this module can call the private constructor.
let make: (code: ErrorCode, message: string, details?: Details, next?: string) => BrokerError

/** An error the user caused or can act on; rendered from the registry, never with a stack trace. */
export class BrokerError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly exit: 1 | 2
  readonly next?: string
  /** Structured extras for clients, e.g. the fields that failed validation. */
  readonly details?: Details

  static {
    make = (code, message, details, next) => new BrokerError(code, message, details, next)
  }

  private constructor(code: ErrorCode, message: string, details?: Details, next?: string) {
    super(message)
    this.name = 'BrokerError'
    const spec: ErrorSpec = ERRORS[code]
    this.code = code
    this.status = spec.status
    this.exit = spec.exit
    this.next = next ?? spec.next
    this.details = details
  }

  /** The JSON body both the HTTP API and `--json` print. */
  toJSON(): { code: ErrorCode; message: string } & Record<string, unknown> {
    return { code: this.code, message: this.message, ...this.details }
  }
}

/** The one way to make a BrokerError: a message id from `MESSAGES` and the values its template reads. */
export function brokerError<Id extends MessageId>(id: Id, ...[values]: MessageArgs<Id>): BrokerError {
  const spec: MessageSpec = MESSAGES[id]
  const v = (values ?? {}) as never
  const text = typeof spec.text === 'string' ? spec.text : spec.text(v)
  const details = typeof spec.details === 'function' ? spec.details(v) : spec.details
  return make(spec.code, text, details, spec.next)
}

/**
 * A broker's JSON error answer (`{code, message, …}`, what `toJSON` printed there) as the same
 * error here. Its message was rendered from this registry on the broker's side.
 */
export function fromBrokerAnswer(code: ErrorCode, message: string, details?: Details): BrokerError {
  return make(code, message, details)
}

export const isBrokerError = (err: unknown): err is BrokerError => err instanceof BrokerError
