/**
 * The flow plugin contract. Built-in flows in this folder and a user's own plugins (in the
 * configured `plugins.dir`, plain JS is fine) export the same shape: a default export, or named
 * exports, matching `FlowPlugin`. A flow is data plus small step functions; the broker's runner
 * does the store I/O, the cookies, the redirects and the delivery to the app.
 */

import type { Registrations } from './contract/registrations.js'

export { type FlowErrorCode, type FlowErrorInit, FlowError } from './contract/flow-error.js'
export type { Registration, RegistrationGrant, Registrations } from './contract/registrations.js'

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

/** Guardian's composition rule: type + _flow + _version + _leg-legged. */
export function pluginName(record: Pick<FlowRecord, 'auth_type' | 'auth_flow' | 'auth_version' | 'auth_leg'>): string {
  return (
    record.auth_type +
    (record.auth_flow ? `_${record.auth_flow}` : '') +
    (record.auth_version ? `_${record.auth_version}` : '') +
    (record.auth_leg ? `_${record.auth_leg}-legged` : '')
  )
}
