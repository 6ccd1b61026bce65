import { input, password } from '@inquirer/prompts'
import { BrokerError } from '../../errors.js'
import { fieldInfo } from './fields.js'

/** True when a person can answer prompts: stdin and stderr (where prompts go) are terminals. */
export const canPrompt = (): boolean => Boolean(process.stdin.isTTY && process.stderr.isTTY)

/** An http(s) URL, or a message saying what is wrong with it. */
export function checkUrl(value: string, allowOob = false): true | string {
  if (allowOob && value === 'oob') return true
  try {
    const url = new URL(value)
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.hostname) return true
  } catch {
    // fall through to the message
  }
  return `Enter an absolute http(s) URL such as https://provider.example/oauth/token${allowOob ? ', or oob' : ''}`
}

/**
 * Fills the missing fields: asks for each on a terminal (secrets masked, URLs validated); without
 * one, MISSING_FIELDS lists every missing field with its flag, exit 2.
 */
export async function askMissing(missing: readonly string[], flagOf: (field: string) => string = (f) => `--${f.replace(/_/g, '-')}`): Promise<Record<string, string>> {
  if (!missing.length) return {}
  if (!canPrompt()) {
    const list = missing.map((f) => `${f} (${flagOf(f)})`).join(', ')
    throw new BrokerError('MISSING_FIELDS', `Missing required field${missing.length > 1 ? 's' : ''}: ${list}.`, { fields: Object.fromEntries(missing.map((f) => [f, 'is required'])) })
  }
  const answers: Record<string, string> = {}
  const context = { output: process.stderr }
  for (const field of missing) {
    const info = fieldInfo(field)
    const message = `${field}${info.summary && info.summary !== field ? ` — ${info.summary}` : ''}`
    const required = (v: string) => (v.trim() ? true : `${field} is required`)
    answers[field] =
      info.kind === 'secret'
        ? await password({ message, mask: '*', validate: required }, context)
        : await input({ message, validate: info.kind === 'url' ? (v) => checkUrl(v.trim(), field === 'callback') : required }, context)
    answers[field] = answers[field]!.trim()
  }
  return answers
}
