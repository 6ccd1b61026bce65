/**
 * The flow plugin contract. Built-in flows in this folder and a user's own plugins (in the
 * configured `plugins.dir`, plain JS is fine) export the same shape: a default export, or named
 * exports, matching `FlowPlugin`. A flow is data plus small step functions; the broker's runner
 * does the store I/O, the cookies, the redirects and the delivery to the app.
 */

/** A stored flow record: the fields of POST /store after sanitizing. Values are strings unless noted. */
export interface FlowRecord {
  auth_type: string
  auth_flow?: string
  auth_version?: string
  auth_leg?: string
  callback?: string
  state?: string
  delivery?: 'query' | 'form_post' | 'code'
  [field: string]: unknown
}

/** A plain HTTP answer, as the flow's `http` helper returns it. */
export interface HttpAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

export interface HttpRequest {
  method?: string
  headers?: Record<string, string>
  body?: string
}

/** What the runner hands each step. */
export interface FlowContext {
  /** The stored record, secrets included (never shown back to users). */
  readonly record: Readonly<FlowRecord>
  /** What earlier steps saved with `save`. */
  readonly data: Readonly<Record<string, unknown>>
  /** The broker's own callback URL, `{protocol}://{host}/callback`. */
  readonly callbackUrl: string
  /** The broker's own OAuth `state` for this flow (fresh, signed, unguessable). */
  readonly state: string
  /** Query and body parameters of the current request (at /callback: the provider's answer). */
  readonly params: Readonly<Record<string, string>>
  /**
   * HTTP to the provider, with the configured timeout (at /callback, provider.timeout bounds the whole
   * exchange, every request of the step together); errors become PROVIDER_ERROR / PROVIDER_TIMEOUT.
   */
  http(url: string, request?: HttpRequest): Promise<HttpAnswer>
  /**
   * Whether the deployment lets the broker use this provider URL (`providers.allow`, and address
   * literals it does not call): for URLs a step learns after /store checked the record, such as an
   * issuer's metadata, which may change. `http` checks its own requests; a redirect is the step's to check.
   */
  allowed(url: string): boolean
  /** The broker's dynamic client registrations (RFC 7591), shared by every instance; absent in a bare unit test. */
  readonly registrations?: Registrations
}

/** A client the broker registered itself at an authorization server (RFC 7591 §3.2.1). */
export interface Registration {
  client_id: string
  /** Secret: kept sealed, never shown or logged. */
  client_secret?: string
  /** The method the server agreed to (`none`, `client_secret_basic` …). */
  token_endpoint_auth_method?: string
  /** Secret: lets the client manage its registration (RFC 7592). */
  registration_access_token?: string
  /** Where the client's registration is read (RFC 7592 §2.1), with the registration_access_token. */
  registration_client_uri?: string
  /** Seconds since the epoch when the client secret expires; 0 or absent: never. */
  client_secret_expires_at?: number
  /** No flow has used it yet: kept briefly, until `confirm` (its first successful token request). */
  unused?: true
}

/**
 * The grant a registered client is for: the code flow (with the broker's redirect URI, and refresh) by
 * default, or client credentials (a confidential client without redirect URIs).
 */
export type RegistrationGrant = 'authorization_code' | 'client_credentials'

/**
 * Where the broker keeps its registrations: sealed in the store, one per authorization server
 * (issuer), redirect URI and grant, until `expiresAt` (ms since the epoch) or the broker's registration.ttl.
 */
export interface Registrations {
  /** The `client_name` of every client the broker registers: the deployment's (registration.clientName), never a record's. */
  readonly clientName: string
  /** Seconds a kept client the server answered for is trusted before the broker asks again (registration.recheck). */
  readonly recheckSeconds: number
  get(issuer: string, redirectUri: string, grant?: RegistrationGrant): Promise<Registration | undefined>
  put(
    issuer: string,
    redirectUri: string,
    registration: Registration,
    expiresAt?: number,
    grant?: RegistrationGrant,
  ): Promise<void>
  drop(issuer: string, redirectUri: string, grant?: RegistrationGrant): Promise<void>
  /** Before registering anew at `issuer`: throws a FlowError when its host has had as many as the deployment allows. */
  admitNew(issuer: string): Promise<void>
  /** After a registration's first successful token request: kept for its whole lifetime from now. */
  confirm(issuer: string, redirectUri: string, grant?: RegistrationGrant): Promise<void>
  /** The authorization server a kept registration has this client_id at, if any. */
  owner(clientId: string): Promise<string | undefined>
  /**
   * Links a protected resource to the authorization server whose tokens for it were delivered (the first
   * link stays until it lapses, renewed by each delivery); returns the server it is linked to.
   */
  bindResource(resource: string, redirectUri: string, issuer: string): Promise<string>
  /** The authorization server a protected resource is linked to by bindResource, if any. */
  resourceIssuer(resource: string, redirectUri: string): Promise<string | undefined>
}

/** What a step returns: the runner acts on it. */
export type StepResult =
  /** Send the browser on (302). `await` names the id the provider will send back to /callback. */
  | { redirect: string; await?: string; save?: Record<string, unknown> }
  /** The flow is done: hand this result to the app's callback (or answer JSON). */
  | { deliver: Record<string, unknown>; save?: Record<string, unknown> }
  /** Answer the caller directly, without ending the flow (e.g. a signing helper). */
  | { respond: { status?: number; headers?: Record<string, string>; body: unknown } }

/** What a plugin's `validate` may use at /store. */
export interface StoreIo {
  /** HTTP to the provider, as in a step. */
  http: FlowContext['http']
  /** Whether the deployment lets records name this provider URL (`providers.allow`), as in a step. */
  allowed: FlowContext['allowed']
  /** The broker's own callback URL, as in a step (a dynamic registration's redirect URI). */
  readonly callbackUrl?: string
  /** As in a step. */
  readonly registrations?: Registrations
}

/** What a plugin's `prepare` hands the runner at /store (RFC 8628's device authorization answer). */
export interface Prepared {
  /** Kept sealed with the flow, for its steps (a device_code). */
  data?: Record<string, unknown>
  /** Added to /store's answer (user_code, verification_uri …). */
  answer?: Record<string, unknown>
  /** The flow's lifetime in seconds when the provider sets it (a device code's expires_in). */
  expiresIn?: number
}

/** What a polling step returns: not yet (poll again in `wait` seconds, keeping `save`), or the result. */
export type PollResult = { wait: number; save?: Record<string, unknown> } | { deliver: Record<string, unknown> }

export interface FlowPlugin {
  /** One line for `hash-check` and the dashboard. */
  readonly description?: string
  /** Fields the record must carry; all missing ones are reported at once. */
  readonly required?: readonly string[]
  /** Extra fields to redact in hash-check, beyond the broker's list. */
  readonly secrets?: readonly string[]
  /** True when `/start` may be called many times (a signing helper); false: a start URL works once. */
  readonly reusable?: boolean
  /**
   * True when `start` needs no I/O and no request parameters (it only builds the provider's URL and
   * awaits the broker's state): the runner then runs it at /store, and /start only claims the flow
   * and sends the browser on, in one atomic store operation. A function decides per record.
   */
  readonly startAtStore?: boolean | ((record: Readonly<FlowRecord>) => boolean)
  /**
   * Extra checks at /store; return a message per bad field (`{field: message}`), empty when fine.
   * `io.http` reaches the provider (e.g. for discovery); a FlowError it throws answers /store with
   * the provider's error (502/504) instead of a validation error.
   */
  validate?(record: Readonly<FlowRecord>, io: StoreIo): Record<string, string> | Promise<Record<string, string>>
  /** Rewrites the record before it is stored (defaults, spellings). */
  normalize?(record: FlowRecord): FlowRecord
  /** The first step, at /start. */
  start(ctx: FlowContext): Promise<StepResult> | StepResult
  /** The step at /callback, for flows that send the browser to the provider. */
  callback?(ctx: FlowContext): Promise<StepResult> | StepResult
  /**
   * At /store, after validation: the provider's first answer (a device authorization). A FlowError
   * it throws answers /store with the provider's error. A plugin with `prepare` and `poll` waits for
   * its user (progress `awaiting_user`) from /store on.
   */
  prepare?(record: Readonly<FlowRecord>, io: StoreIo): Promise<Prepared>
  /**
   * POST /result `{hash}`: one look at whether the user has decided (RFC 8628 §3.4). The runner
   * calls it at most once per `wait`, on one instance at a time; a FlowError ends the flow.
   */
  poll?(ctx: FlowContext): Promise<PollResult>
}

/**
 * The broker's codes for a flow's failure (its error registry's): `broker_error` at the app's
 * callback, and the HTTP status when the flow has no callback. Only the broker picks these.
 */
export type FlowErrorCode = 'PROVIDER_ERROR' | 'PROVIDER_TIMEOUT' | 'PROVIDER_NOT_ALLOWED' | 'VALIDATION' | 'FAILED'

/** What a FlowError says, each in its own field: never read from the other or from the text. */
export interface FlowErrorInit {
  /**
   * The OAuth `error` the app's callback receives (RFC 6749 §4.1.2.1, §5.2): a provider's own code as it
   * sent it (`invalid_grant`, Square's `UNAUTHORIZED`, an OAuth 1.0a `oauth_problem`), or one of the
   * protocol's. Default: by `brokerCode` (`temporarily_unavailable` for a timeout, `invalid_request`
   * for VALIDATION, else `server_error`). Whatever its spelling, it is never taken for a broker code.
   */
  oauthError?: string
  /** The broker's code (default PROVIDER_ERROR). */
  brokerCode?: FlowErrorCode
  /** What went wrong, in words: the app's `error_description`. */
  description: string
}

const DEFAULT_OAUTH_ERROR: Readonly<Record<FlowErrorCode, string>> = {
  PROVIDER_ERROR: 'server_error',
  PROVIDER_TIMEOUT: 'temporarily_unavailable',
  PROVIDER_NOT_ALLOWED: 'server_error',
  VALIDATION: 'invalid_request',
  FAILED: 'server_error',
}

/**
 * Thrown by a step to end the flow with an error that goes to the app's callback as
 * `?error=<oauthError>&error_description=<description>&broker_error=<brokerCode>`, or as JSON
 * `{code: brokerCode, message: description, error: oauthError}` (with brokerCode's HTTP status)
 * when the flow has no callback: `new FlowError({ oauthError: 'access_denied', description: '…' })`.
 */
export class FlowError extends Error {
  readonly oauthError: string
  readonly brokerCode: FlowErrorCode
  readonly description: string

  constructor(init: FlowErrorInit) {
    super(init.description)
    this.name = 'FlowError'
    this.brokerCode = init.brokerCode ?? 'PROVIDER_ERROR'
    this.oauthError = init.oauthError ?? DEFAULT_OAUTH_ERROR[this.brokerCode] ?? 'server_error'
    this.description = init.description
  }
}

/** Guardian's composition rule: type + _flow + _version + _leg-legged. */
export function pluginName(record: Pick<FlowRecord, 'auth_type' | 'auth_flow' | 'auth_version' | 'auth_leg'>): string {
  return (
    record.auth_type +
    (record.auth_flow ? `_${record.auth_flow}` : '') +
    (record.auth_version ? `_${record.auth_version}` : '') +
    (record.auth_leg ? `_${record.auth_leg}-legged` : '')
  )
}
