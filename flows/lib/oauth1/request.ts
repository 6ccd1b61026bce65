import type { FlowRecord } from '../../contract.js'
import { formParams, isFormBody, type Param } from './sign.js'

/** A request to sign for a caller of the signing helper. */
export interface RequestToSign {
  method: string
  url: string
  params: Param[]
}

/**
 * Reads the request to sign from the caller's parameters: `url` (its query counts), `method`
 * (GET), `parameters` (a JSON object, a query string, or `parameters[name]` fields) and `body`,
 * whose fields count only when it is a form (`content_type`, or a form's shape). Returns the
 * request, or a message per bad field.
 */
export function requestToSign(
  input: Readonly<Record<string, string>>,
): RequestToSign | { problems: Record<string, string> } {
  const problems: Record<string, string> = {}
  const url = input.url ?? ''
  if (!url) problems.url = 'is required: the URL of the request to sign'
  else if (!isHttpUrl(url)) problems.url = 'must be an absolute http(s) URL'
  const method = (input.method ?? 'GET').toUpperCase()
  if (!/^[A-Z]{1,16}$/.test(method)) problems.method = 'must be an HTTP method such as GET or POST'
  const params: Param[] = []
  if (input.parameters !== undefined && input.parameters !== '') {
    const parsed = parseParameters(input.parameters)
    if (typeof parsed === 'string') problems.parameters = parsed
    else params.push(...parsed)
  }
  for (const [k, v] of Object.entries(input)) {
    const m = /^parameters\[(.+)\]$/.exec(k)
    if (m) params.push([m[1]!, v])
  }
  if (input.body && isFormBody(input.body, input.content_type)) params.push(...formParams(input.body))
  return Object.keys(problems).length ? { problems } : { method, url, params }
}

function parseParameters(text: string): Param[] | string {
  if (!text.trim().startsWith('{')) return formParams(text)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return 'must be a JSON object or a query string (a=1&b=2)'
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return 'must be a JSON object or a query string (a=1&b=2)'
  const out: Param[] = []
  for (const [k, v] of Object.entries(value)) {
    for (const item of Array.isArray(v) ? v : [v]) {
      if (item === null || item === undefined) continue
      if (typeof item === 'object')
        return `has a nested value under "${k.slice(0, 64)}": values must be text, numbers or booleans`
      out.push([k, String(item)])
    }
  }
  return out
}

/** Whether the flow answers its caller directly (no callback, or `oob`) rather than delivering. */
export const answersDirectly = (record: Readonly<FlowRecord>): boolean =>
  record.callback === undefined || record.callback === 'oob'

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value)
    return (u.protocol === 'http:' || u.protocol === 'https:') && !!u.hostname
  } catch {
    return false
  }
}
