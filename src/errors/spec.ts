/** The shapes every part of the registry shares; the parts themselves are http.ts, config.ts, cli.ts and pdk.ts. */

export interface ErrorSpec {
  /** HTTP status, for the codes an HTTP answer can carry (http.ts); the others have none. */
  readonly status?: number
  /** CLI exit code: 2 for bad input or usage, 1 for a failure. */
  readonly exit: 1 | 2
  /** What the user can do next; shown by the CLI under the message. */
  readonly next?: string
}

/** Extras a message adds to the JSON body, e.g. the fields that failed validation. */
export type Details = Readonly<Record<string, unknown>>

export interface MessageSpec<Code extends string = string> {
  readonly code: Code
  /** The message: a sentence, or a template that builds it from the throw site's values. */
  readonly text: string | ((values: never) => string)
  /** Extras for the JSON body: fixed, or built from the same values. */
  readonly details?: Details | ((values: never) => Details)
  /** The next step when this message needs another than its code's (shown by the CLI only). */
  readonly next?: string
}

/** `name problem; name problem` for a fields map. */
export const listFields = (fields: Readonly<Record<string, string>>): string =>
  Object.entries(fields)
    .map(([k, v]) => `${k} ${v}`)
    .join('; ')

export const noFields = { fields: {} } as const
