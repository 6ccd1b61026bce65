import { brokerError } from '../../errors/index.js'
import { Walker } from '../walk/walker.js'

/**
 * Runs a flow that has no user step as a browser would: follows the redirects from its start URL
 * to `callback`, and submits the broker's auto-posting form when the record asks for form_post.
 */
export async function driveFlow(start: string, callback: string, hash: string, maxHops = 10): Promise<void> {
  const walker = new Walker(start)
  for (let n = 0; n < maxHops; n++) {
    const hop = await walker.next()
    if (!hop) break
    if (hop.url.startsWith(callback)) return
  }
  const fields = walker.final ? postedForm(walker.final.body, callback) : undefined
  if (fields) {
    await fetch(callback, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
      signal: AbortSignal.timeout(15_000),
    })
    return
  }
  const reason = walker.stopped?.message ?? `stopped after ${maxHops} hops`
  throw brokerError('flowEndedEarly', { reason, hash })
}

const decode = (s: string) =>
  s
    .replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n)))
    .replace(/&(quot|lt|gt|amp);/g, (_m, e: string) => ({ quot: '"', lt: '<', gt: '>', amp: '&' })[e]!)

/** The hidden fields of an HTML form that posts to `callback` (a form_post delivery page), if the page is one. */
export function postedForm(html: string, callback: string): Record<string, string> | undefined {
  const form = /<form\b[^>]*\bmethod="post"[^>]*\baction="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html)
  if (!form || decode(form[1]!) !== callback) return undefined
  const fields: Record<string, string> = {}
  for (const input of form[2]!.matchAll(/<input\b[^>]*\bname="([^"]*)"[^>]*\bvalue="([^"]*)"[^>]*>/gi))
    fields[decode(input[1]!)] = decode(input[2]!)
  return fields
}
