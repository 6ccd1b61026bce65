import { input, password } from '@inquirer/prompts'
import { brokerError } from '../../errors/index.js'
import { fieldInfo, type FieldKind } from './fields.js'

/** True when a person can answer prompts: stdin and stderr (where prompts go) are terminals. */
export const canPrompt = (): boolean => Boolean(process.stdin.isTTY && process.stderr.isTTY)

// What each URL field looks like, for the message a wrong value gets.
const EXAMPLES: Readonly<Record<string, string>> = {
  authorize_url: 'https://provider.example/oauth/authorize',
  access_url: 'https://provider.example/oauth/token',
  request_url: 'https://provider.example/oauth/request_token',
  device_authorization_url: 'https://provider.example/oauth/device',
  par_url: 'https://provider.example/oauth/par',
  issuer: 'https://login.provider.example',
  jwks_uri: 'https://provider.example/.well-known/jwks.json',
  profile_url: 'https://provider.example/userinfo',
  resource: 'https://mcp.example/mcp',
  callback: 'https://app.example/oauth/callback',
}

/** An http(s) URL (or `oob` for the callback), or a message saying what is wrong with it, with an example of `field`'s kind. */
export function checkUrl(value: string, field: string): true | string {
  const allowOob = field === 'callback'
  if (allowOob && value === 'oob') return true
  try {
    const url = new URL(value)
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.hostname) return true
  } catch {
    // fall through to the message
  }
  return `Enter an absolute http(s) URL such as ${EXAMPLES[field] ?? 'https://provider.example/…'}${allowOob ? ', or oob' : ''}`
}

/** How one missing value is asked for: its kind (secrets masked, URLs checked), words and flag. */
export interface PromptSpec {
  kind: FieldKind
  summary: string
  flag: string
  /** An extra check: true, or what is wrong. */
  check?: (value: string) => true | string
}

const recordPrompt = (field: string): PromptSpec => {
  const info = fieldInfo(field)
  return { kind: info.kind, summary: info.summary, flag: `--${field.replace(/_/g, '-')}` }
}

/**
 * Fills the missing fields: asks for each on a terminal (secrets masked, URLs validated); without
 * one, or when the caller may not ask (`interactive: false`, e.g. under --json), MISSING_FIELDS lists
 * every missing field with its flag, exit 2. Ctrl-C at a prompt is CANCELLED.
 */
export async function askMissing(
  missing: readonly string[],
  specOf: (field: string) => PromptSpec = recordPrompt,
  { interactive = true }: { interactive?: boolean } = {},
): Promise<Record<string, string>> {
  if (!missing.length) return {}
  if (!interactive || !canPrompt()) {
    throw brokerError('missingFields', { missing: missing.map((field) => ({ field, flag: specOf(field).flag })) })
  }
  const answers: Record<string, string> = {}
  const context = { output: process.stderr }
  for (const field of missing) {
    const spec = specOf(field)
    const message = `${field}${spec.summary && spec.summary !== field ? ` — ${spec.summary}` : ''}`
    const validate = (raw: string): true | string => {
      const v = raw.trim()
      if (!v) return `${field} is required`
      if (spec.kind === 'url') return checkUrl(v, field)
      return spec.check ? spec.check(v) : true
    }
    try {
      answers[field] =
        spec.kind === 'secret'
          ? await password({ message, mask: '*', validate }, context)
          : await input({ message, validate }, context)
    } catch (err) {
      // @inquirer/prompts rejects with ExitPromptError on Ctrl-C (and when the terminal goes away).
      if ((err as Error).name === 'ExitPromptError' || (err as Error).name === 'AbortPromptError') {
        throw brokerError('cancelled', { field })
      }
      throw err
    }
    answers[field] = answers[field]!.trim()
  }
  return answers
}
