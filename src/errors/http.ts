/** What the HTTP API answers (and the CLI shows when a broker answered so): each code has its HTTP status. */
import { type ErrorSpec, type MessageSpec, listFields, noFields } from './spec.js'

export const HTTP_ERRORS = {
  VALIDATION: { status: 400, exit: 2, next: 'Fix the fields named above and send the request again.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, exit: 2, next: 'Send application/json or application/x-www-form-urlencoded.' },
  BODY_TOO_LARGE: { status: 413, exit: 2, next: 'Send a smaller body, or raise `body.limit` in the config.' },
  UNKNOWN_HASH: {
    status: 404,
    exit: 1,
    next: 'Store the flow again with `broker store`: hashes expire after store.expire seconds.',
  },
  UNKNOWN_STATE: { status: 400, exit: 1, next: 'Start the flow again from its start URL.' },
  UNKNOWN_RESULT: { status: 404, exit: 1, next: 'Result codes are single use and expire after store.expire seconds.' },
  FLOW_PLUGIN_MISSING: {
    status: 404,
    exit: 2,
    next: 'Check auth_type, auth_flow, auth_version and auth_leg, or add the plugin to plugins.dir.',
  },
  FLOW_PLUGIN_INVALID: {
    status: 500,
    exit: 1,
    next: 'A flow plugin must export start(ctx); see docs/flow-plugins.md.',
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
    // Also what /store answers when discovery or a provider check fails there: nothing was stored then.
    next: 'Check the provider URLs (or the issuer and its discovery document) and the client credentials, then store the flow again.',
  },
  PROVIDER_TIMEOUT: {
    status: 504,
    exit: 1,
    next: 'The provider did not answer in time; raise `provider.timeout` or try again.',
  },
  // Issue 27 (13, 4): failures the runner reports for a flow, never a flow plugin's to pick.
  EXCHANGE_INTERRUPTED: {
    status: 500,
    exit: 1,
    next: 'The broker stopped while it exchanged the code with the provider; start the flow again.',
  },
  RESULT_NOT_KEPT: {
    status: 503,
    exit: 1,
    next: 'The flow store did not take the result for delivery by code; check that Redis takes writes, then start the flow again.',
  },
  URL_TOO_LONG: {
    status: 502,
    exit: 1,
    next: "The provider's answer does not fit in a URL: store the flow with delivery form_post or code.",
  },
  STORE_UNAVAILABLE: {
    status: 503,
    exit: 1,
    next: 'Check that Redis answers at store.host:store.port, or run with `--store memory` (store.driver in a config file).',
  },
  // ── issue 27 (ops) ──
  STORE_FULL: {
    status: 503,
    exit: 1,
    next: 'Try again once stored flows have expired, or raise store.memoryLimit; use Redis beyond one machine and development.',
  },
  // ── end issue 27 (ops) ──
  UNAUTHORIZED: { status: 401, exit: 1 },
  NOT_FOUND: { status: 404, exit: 1 },
  FAILED: { status: 500, exit: 1 },
  INTERNAL: { status: 500, exit: 1 },
  PROVIDER_NOT_ALLOWED: {
    status: 400,
    exit: 2,
    next: "Use the provider's public address, or name its origin in `providers.allow` in the broker config (loopback and private hosts only: link-local and metadata addresses are never called).",
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
} as const satisfies Record<string, ErrorSpec & { readonly status: number }>

/** The messages of these codes, as templates (see index.ts). */
export const HTTP_MESSAGES = {
  // VALIDATION: a request the HTTP API refuses; `fields` names what was wrong.
  hashRequired: {
    code: 'VALIDATION',
    text: 'The hash query parameter is required.',
    details: { fields: { hash: 'is required' } },
  },
  // --- issue 25 (device flow, RFC 8628) ---
  notPollingFlow: {
    code: 'VALIDATION',
    text: (v: { plugin: string }) =>
      `The flow "${v.plugin}" is not polled; POST /result takes the hash of a device flow (oauth_device_2), or a result code.`,
    details: { fields: { hash: 'is not the hash of a device flow' } },
  },
  // --- end issue 25 ---
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
  unsupportedMediaType: {
    code: 'UNSUPPORTED_MEDIA_TYPE',
    text: 'Unsupported content type; send application/json or application/x-www-form-urlencoded.',
  },
  bodyTooLarge: { code: 'BODY_TOO_LARGE', text: 'The request body is larger than this broker accepts.' },
  unknownHash: { code: 'UNKNOWN_HASH', text: 'No flow is stored under this hash: it expired or never existed.' },
  callbackWithoutState: { code: 'UNKNOWN_STATE', text: 'The callback carries neither state nor oauth_token.' },
  stateNotIssued: { code: 'UNKNOWN_STATE', text: 'The state parameter was not issued by this broker.' },
  noFlowWaits: { code: 'UNKNOWN_STATE', text: 'No flow waits for this callback: it expired or never existed.' },
  wrongRedirect: {
    code: 'UNKNOWN_STATE',
    text: 'No flow waits for this callback at this address: the flow was sent to another authorization server, whose answer comes back to its own redirect URI.',
  },
  unknownResult: {
    code: 'UNKNOWN_RESULT',
    text: 'No result under this code: it was redeemed already or expired.',
  },
  pluginMissing: {
    code: 'FLOW_PLUGIN_MISSING',
    text: (v: { plugin: string }) => `No flow plugin named "${v.plugin}".`,
    details: (v: { plugin: string }) => ({ plugin: v.plugin }),
  },
  /** `reason`: the first line of the load error, paths already removed. */
  pluginLoadFailed: {
    code: 'FLOW_PLUGIN_INVALID',
    text: (v: { plugin: string; reason: string }) => `The flow plugin "${v.plugin}" failed to load: ${v.reason}`,
    details: (v: { plugin: string }) => ({ plugin: v.plugin }),
  },
  pluginWithoutStart: {
    code: 'FLOW_PLUGIN_INVALID',
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
  /** A Sentinel failover under way: the broker acknowledges no write until it is on the new master. */
  storeFailingOver: {
    code: 'STORE_UNAVAILABLE',
    text: 'The flow store is failing over to a new master; try again shortly.',
  },
  /** The reload of a /start answered 503 during a failover, while the undo of that start's claim is still made. */
  startBeingUndone: {
    code: 'STORE_UNAVAILABLE',
    text: 'This start URL is being made usable again after the flow store failed over; try again shortly.',
  },
  // ── issue 27 (ops) ──
  storeNotReplicated: {
    code: 'STORE_UNAVAILABLE',
    text: (v: { acked: number; replicas: number }) =>
      `The flow store kept the write on ${v.acked} of the ${v.replicas} replicas store.replicas asks for; try again shortly.`,
    // The write itself was carried out on the master: after a token exchange it is delivered all the same.
    details: (v: { acked: number; replicas: number }) => ({ acked: v.acked, replicas: v.replicas }),
  },
  storeFull: {
    code: 'STORE_FULL',
    text: 'The embedded flow store is full (store.memoryLimit); try again once stored flows have expired.',
  },
  // ── end issue 27 (ops) ──
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
  storeAnswerUnexpected: {
    code: 'FAILED',
    text: (v: { url: string }) =>
      `The broker at ${v.url} answered POST /store without the hash, url, plugin and expires_in this CLI reads; is it a broker?`,
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
  providerNotAllowed: {
    code: 'PROVIDER_NOT_ALLOWED',
    text: (v: { field: string; origin: string }) => `The ${v.field} ${v.origin} is not in providers.allow.`,
    details: (v: { field: string }) => ({ field: v.field }),
  },
  providerAddressNotAllowed: {
    code: 'PROVIDER_NOT_ALLOWED',
    text: (v: { field: string; origin: string }) =>
      `The ${v.field} ${v.origin} names an internal address (loopback, private) that this broker does not call; name it in providers.allow to allow it.`,
    details: (v: { field: string }) => ({ field: v.field }),
  },
  /** Link-local, cloud metadata, unspecified, multicast, reserved: never called, so no list entry is suggested. */
  providerAddressForbidden: {
    code: 'PROVIDER_NOT_ALLOWED',
    text: (v: { field: string; origin: string }) =>
      `The ${v.field} ${v.origin} names a link-local, cloud metadata, multicast or reserved address: no provider lives there, and the broker never calls one.`,
    details: (v: { field: string }) => ({ field: v.field }),
    next: "Use the provider's own URL, as its documentation gives it.",
  },
  /** A provider request the policy stopped at connect time; the address it resolved to is not named. */
  providerRefused: {
    code: 'PROVIDER_NOT_ALLOWED',
    text: (v: { origin: string }) =>
      `${v.origin} is not a provider this broker calls: it is not in providers.allow, or it resolves to an internal address.`,
  },
  providerUrlInvalid: { code: 'PROVIDER_NOT_ALLOWED', text: 'The provider URL is not an absolute http(s) URL.' },
  // Issue 27 (13, 4): the runner's own flow failures.
  exchangeInterrupted: {
    code: 'EXCHANGE_INTERRUPTED',
    text: 'The token exchange with the provider was interrupted: the broker stopped while it ran, and the provider may have taken the code. Start the flow again.',
  },
  resultNotKept: {
    code: 'RESULT_NOT_KEPT',
    text: 'The provider answered, but the flow store did not keep the result for delivery by code within store.timeout; start the flow again.',
  },
  urlTooLong: {
    code: 'URL_TOO_LONG',
    text: (v: { length: number; max: number }) =>
      `The result would make a callback URL of ${v.length} characters, more than the ${v.max} a URL safely carries; store the flow with delivery form_post or code.`,
  },
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
