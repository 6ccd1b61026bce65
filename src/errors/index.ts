/**
 * The one registry of errors, split by audience: `http.ts` (codes an HTTP answer carries, with their
 * status), `config.ts`, `cli.ts` and `pdk.ts` (no status: no request is answered with them). Each code
 * has its exit code and next step; every message is a template under an id, so a throw site names the
 * message and passes values (`throw brokerError('pluginMissing', { plugin })`), never prose. The CLI
 * and the HTTP server render both from here, so a code means the same everywhere; docs/errors.md is
 * generated from it.
 */
import { CLI_ERRORS, CLI_MESSAGES } from './cli.js'
import { CONFIG_ERRORS, CONFIG_MESSAGES } from './config.js'
import { HTTP_ERRORS, HTTP_MESSAGES } from './http.js'
import { PDK_ERRORS, PDK_MESSAGES } from './pdk.js'
import type { Details, ErrorSpec, MessageSpec } from './spec.js'

export type { Details, ErrorSpec, MessageSpec } from './spec.js'

/** Every code, whatever its audience. */
export const ERRORS = { ...HTTP_ERRORS, ...CONFIG_ERRORS, ...CLI_ERRORS, ...PDK_ERRORS } as const

export type ErrorCode = keyof typeof ERRORS

/** The codes an HTTP answer can carry. */
export type HttpErrorCode = keyof typeof HTTP_ERRORS

/** The HTTP status of a code: its own, or 500 for a code no request should ever be answered with. */
export const httpStatus = (code: ErrorCode): number => (ERRORS[code] as ErrorSpec).status ?? 500

/** Every message a BrokerError can carry, by id. */
export const MESSAGES = {
  ...HTTP_MESSAGES,
  ...CONFIG_MESSAGES,
  ...CLI_MESSAGES,
  ...PDK_MESSAGES,
} as const satisfies Record<string, MessageSpec<ErrorCode>>

/** How many messages the parts define: equal to MESSAGES' size unless two parts reuse an id (a test checks). */
export const MESSAGE_COUNT = [HTTP_MESSAGES, CONFIG_MESSAGES, CLI_MESSAGES, PDK_MESSAGES].reduce(
  (n, part) => n + Object.keys(part).length,
  0,
)

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
    this.status = spec.status ?? 500
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
  const spec: MessageSpec<ErrorCode> = MESSAGES[id]
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
