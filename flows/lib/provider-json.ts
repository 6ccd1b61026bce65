import { FlowError } from '../contract.js'

/**
 * How far a provider's answer may nest, and how many values it may hold. Providers answer a few
 * dozen fields at most two or three levels deep (Slack's `authed_user`, Facebook's `error`); a
 * hostile one sending 100,000 levels made `JSON.stringify` run out of stack at delivery, after the
 * flow was marked completed, and 40,000 fields made a 700 kB Location header.
 */
export const MAX_DEPTH = 32
export const MAX_VALUES = 2_000

/** Why `text` (JSON) is past the bounds, or undefined: one pass over the text, before anything is built from it. */
export function jsonShapeProblem(text: string): string | undefined {
  let depth = 0
  let values = 1
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_DEPTH) return `nests deeper than ${MAX_DEPTH} levels`
    } else if (c === 0x7d || c === 0x5d) depth--
    else if (c === 0x2c && ++values > MAX_VALUES) return `holds more than ${MAX_VALUES} values`
  }
  return undefined
}

/** Why a form-encoded `text` is past the bounds, or undefined. */
export function formShapeProblem(text: string): string | undefined {
  let values = 1
  for (let i = text.indexOf('&'); i !== -1; i = text.indexOf('&', i + 1))
    if (++values > MAX_VALUES) return `holds more than ${MAX_VALUES} values`
  return undefined
}

/** The provider error for an answer past the bounds: `what` names the answer ("The token endpoint's answer"). */
export const shapeError = (what: string, problem: string): FlowError =>
  new FlowError({ description: `${what} ${problem}; the broker reads no answer that large` })

/**
 * A provider's JSON answer: the parsed value, or undefined when `text` is not JSON. Past MAX_DEPTH
 * or MAX_VALUES it is a provider error (PROVIDER_ERROR) naming `what`, before anything is parsed.
 */
export function readProviderJson(text: string, what: string): unknown {
  const problem = jsonShapeProblem(text)
  if (problem) throw shapeError(what, problem)
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}
