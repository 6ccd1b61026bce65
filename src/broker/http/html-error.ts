import type { FastifyRequest } from 'fastify'
import type { BrokerError } from '../../errors/index.js'

// A person, not an app, reaches /start and /callback: a browser that comes back after the flow
// expired (a slow login: MFA, a password manager) or with a link that never named one was shown a
// raw JSON error. It gets a short page instead; the status, the code and the security headers stay
// (default-src 'none': no style or script on the page). Anything that asks for JSON still gets JSON.
const BROWSER_ROUTES = new Set(['/start', '/callback'])
const GONE_CODES = new Set(['UNKNOWN_HASH', 'UNKNOWN_STATE'])

/** Whether `err` on this request is answered with the HTML page rather than JSON. */
export function wantsHtmlPage(request: FastifyRequest, err: BrokerError): boolean {
  if (!GONE_CODES.has(err.code) || !BROWSER_ROUTES.has(request.url.split('?')[0]!)) return false
  // Accept as a browser sends it on a navigation: text/html named, before any JSON.
  const accept = String(request.headers.accept ?? '').toLowerCase()
  const html = accept.indexOf('text/html')
  const json = accept.indexOf('application/json')
  return html >= 0 && (json < 0 || html < json)
}

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** The page: what happened and what to do, with the registry's code for whoever reports it. */
export function htmlErrorPage(err: BrokerError): string {
  const what =
    err.code === 'UNKNOWN_HASH'
      ? 'This sign-in link has expired, was used already or never existed.'
      : 'This sign-in is no longer waiting: it took longer than the broker waits, or it was never started here.'
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><title>Sign-in expired</title></head><body>',
    '<h1>Sign-in expired</h1>',
    `<p>${escape(what)}</p>`,
    '<p>Go back to the application you came from and sign in again: it starts a new sign-in.</p>',
    `<p><small>${escape(err.code)}: ${escape(err.message)}</small></p>`,
    '</body></html>',
    '',
  ].join('\n')
}
