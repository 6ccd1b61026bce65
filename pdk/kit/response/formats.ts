/** Default error messages, error body formats and content types of pdk.response, as Kong has them. */
import type { Context } from '../context.js'

const MESSAGES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  402: 'Payment required',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  406: 'Not acceptable',
  407: 'Proxy authentication required',
  408: 'Request timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length required',
  412: 'Precondition failed',
  413: 'Payload too large',
  414: 'URI too long',
  415: 'Unsupported media type',
  416: 'Range not satisfiable',
  417: 'Expectation failed',
  418: "I'm a teapot",
  421: 'Misdirected request',
  422: 'Unprocessable entity',
  423: 'Locked',
  424: 'Failed dependency',
  425: 'Too early',
  426: 'Upgrade required',
  428: 'Precondition required',
  429: 'Too many requests',
  431: 'Request header fields too large',
  451: 'Unavailable for legal reasons',
  494: 'Request header or cookie too large',
  500: 'An unexpected error occurred',
  501: 'Not implemented',
  502: 'An invalid response was received from the upstream server',
  503: 'The upstream server is currently unavailable',
  504: 'The upstream server is timing out',
  505: 'HTTP version not supported',
  506: 'Variant also negotiates',
  507: 'Insufficient storage',
  508: 'Loop detected',
  510: 'Not extended',
  511: 'Network authentication required',
}

/** The default message for an error status. */
export const statusMessage = (status: number): string =>
  MESSAGES[status] ?? `The upstream server responded with ${status}`

const JSON_MIME = 'application/json; charset=utf-8'
const MIME_TYPES: Record<string, string> = {
  'text/html': 'text/html; charset=utf-8',
  'application/json': JSON_MIME,
  'text/plain': 'text/plain; charset=utf-8',
  'application/xml': 'application/xml; charset=utf-8',
  application: JSON_MIME,
  text: 'text/plain; charset=utf-8',
}

// Own keys only: a media type is the client's text, and `constructor/*` must not find Object's.
const mimeNamed = (name: string): string => (Object.hasOwn(MIME_TYPES, name) ? MIME_TYPES[name]! : JSON_MIME)

function mimeOf(mediaType: string): string {
  const bare = mediaType.split(';')[0]!.trim().toLowerCase()
  const [type, sub] = bare.split('/')
  if (sub === undefined) return JSON_MIME
  if (sub === '*') return type === '*' ? JSON_MIME : mimeNamed(type!)
  return mimeNamed(bare)
}

const ACCEPT =
  /^((?:[a-z0-9][a-z0-9\-!#$&^_+.]+|\*)\/(?:[a-z0-9][a-z0-9\-!#$&^_+.]+|\*))(?:\s*;\s*q=(1(?:\.0{0,3})?|0(?:\.\d{0,3})?)|\s*;\s*[a-z0-9][a-z0-9\-!#$&^_+.]+(?:=[^;]*)?)*/i

/** The response content type chosen from an Accept header (highest quality wins; JSON by default). */
export function responseType(accept: string | undefined): string {
  let type = JSON_MIME
  if (accept === undefined) return type
  let best = 0
  for (const raw of accept.split(',')) {
    const m = ACCEPT.exec(raw.trim())
    if (!m) continue
    const q = m[2] !== undefined ? Number(m[2]) : 1
    if (q > best) {
      best = q
      type = mimeOf(m[1]!)
    }
  }
  return type
}

const TEMPLATES: Record<string, (message: string, id: string) => string> = {
  json: (m, id) => `{\n  "message":"${m}",\n  "request_id":"${id}"\n}`,
  html: (m, id) =>
    `<!doctype html>\n<html>\n  <head>\n    <meta charset="utf-8">\n    <title>Error</title>\n  </head>\n  <body>\n    <h1>Error</h1>\n    <p>${m}.</p>\n    <p>request_id: ${id}</p>\n  </body>\n</html>\n`,
  xml: (m, id) =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<error>\n  <message>${m}</message>\n  <requestid>${id}</requestid>\n</error>\n`,
  plain: (m, id) => `${m}\nrequest_id: ${id}\n`,
}

/** The error body for a content type (Kong's templates; JSON when the type has none). */
export function errorBody(contentType: string, message: string, requestId: string): string {
  const bare = contentType.split(';')[0]!.trim().toLowerCase()
  const kind =
    bare === 'text/html' ? 'html' : bare === 'application/xml' ? 'xml' : bare === 'text/plain' ? 'plain' : 'json'
  return TEMPLATES[kind]!(message, requestId)
}

/** A gRPC request: Content-Type application/grpc over HTTP/2. */
export function isGrpc(ctx: Context): boolean {
  const ct = ctx.request.headers.get('content-type')
  return ct !== undefined && ct.startsWith('application/grpc') && ctx.request.httpVersion === 2
}
