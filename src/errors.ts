/**
 * The one registry of error codes. Services throw `BrokerError`s; the CLI and the HTTP server
 * render them from here, so a code means the same status, exit code and next step everywhere.
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
    next: 'Store the flow again with POST /store: hashes expire after store.expire seconds.',
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
    next: 'Fix the field named above; pdk/fixture.schema.json describes every field (see docs/pdk.md).',
  },
  MISSING_FIELDS: {
    status: 400,
    exit: 2,
    next: 'Pass them as flags (or in --file), or run the command in a terminal to be asked for them.',
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
  RATE_LIMITED: {
    status: 429,
    exit: 1,
    next: 'Wait for the Retry-After seconds, or raise rate.store / rate.start in the broker config.',
  },
} as const satisfies Record<string, ErrorSpec>

export type ErrorCode = keyof typeof ERRORS

/** An error the user caused or can act on; rendered from the registry, never with a stack trace. */
export class BrokerError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly exit: 1 | 2
  readonly next?: string
  /** Structured extras for clients, e.g. the fields that failed validation. */
  readonly details?: Record<string, unknown>

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message)
    this.name = 'BrokerError'
    const spec: ErrorSpec = ERRORS[code]
    this.code = code
    this.status = spec.status
    this.exit = spec.exit
    this.next = spec.next
    this.details = details
  }

  /** The JSON body both the HTTP API and `--json` print. */
  toJSON(): { code: ErrorCode; message: string } & Record<string, unknown> {
    return { code: this.code, message: this.message, ...this.details }
  }
}

export const isBrokerError = (err: unknown): err is BrokerError => err instanceof BrokerError
