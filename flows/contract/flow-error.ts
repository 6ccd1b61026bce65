/** The error a flow step throws to end its flow, part of the plugin contract. */

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
