import type { ApiCall } from './api.js'

/** The request headers sent and the provider's answer (status, headers, body with JSON pretty-printed). */
export function renderApiCall(call: ApiCall): string {
  const body = typeof call.response.body === 'string' ? call.response.body : JSON.stringify(call.response.body, null, 2)
  return [
    `→ ${call.request.method} ${call.request.url}`,
    ...Object.entries(call.request.headers).map(([k, v]) => `  ${k}: ${v}`),
    '',
    `← ${call.response.status}`,
    ...Object.entries(call.response.headers).map(([k, v]) => `  ${k}: ${v}`),
    '',
    body,
  ].join('\n')
}
