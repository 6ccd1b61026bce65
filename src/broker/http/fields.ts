import { brokerError } from '../../errors/index.js'

/**
 * The few request fields the routes check by shape before their endpoint runs: a `serve` worker
 * compiles no JSON schemas, so it never loads Ajv and fast-json-stringify (about 2 MB of an idle
 * worker's memory, docs/decisions/0012). The endpoints check everything else in their own pass.
 *
 * A field is optional text, at most `maxLength` characters, matching `pattern` when given. A field
 * repeated in a query string arrives as a list: a list of one is that one value (as Fastify's
 * validator coerced it), a longer list is refused; a JSON number, boolean or null is taken as text
 * (the same coercion). The messages are the ones the schemas gave.
 */
export interface TextField {
  maxLength?: number
  pattern?: RegExp
}

export type RequestPart = 'querystring' | 'params' | 'body'

/**
 * Fastify's schema compilers for a server that declares no schema: Fastify then loads neither Ajv nor
 * fast-json-stringify. A route that declares one fails at start, naming this file.
 */
export const noSchemaCompilers = {
  compilersFactory: {
    buildValidator: () => () => {
      throw new Error('the broker compiles no request schemas: check fields in the route (src/broker/http/fields.ts)')
    },
    buildSerializer: () => () => {
      throw new Error('the broker compiles no response schemas: an endpoint answers only its own fields')
    },
  },
}

/** `source`'s fields named in `fields`, checked; any other field passes as it is. Throws VALIDATION (400). */
export function checkedText<F extends string>(
  part: RequestPart,
  source: unknown,
  fields: Record<F, TextField>,
): Partial<Record<F, string>> {
  const from = source && typeof source === 'object' ? (source as Record<string, unknown>) : {}
  const out: Partial<Record<F, string>> = {}
  let problems: Record<string, string> | undefined
  for (const name of Object.keys(fields) as F[]) {
    if (!Object.hasOwn(from, name)) continue
    let value = from[name]
    if (Array.isArray(value) && value.length === 1) value = value[0]
    // As the schemas' validator coerced them: a JSON number or boolean is its text, null the empty text.
    if (typeof value === 'number' || typeof value === 'boolean') value = String(value)
    else if (value === null) value = ''
    const rule = fields[name]
    const problem =
      typeof value !== 'string'
        ? 'must be string'
        : rule.maxLength !== undefined && value.length > rule.maxLength
          ? `must NOT have more than ${rule.maxLength} characters`
          : rule.pattern && !rule.pattern.test(value)
            ? `must match pattern "${rule.pattern.source}"`
            : undefined
    if (problem) (problems ??= {})[name] = problem
    else out[name] = value as string
  }
  if (problems) throw brokerError('invalidRequest', { part, fields: problems })
  return out
}
