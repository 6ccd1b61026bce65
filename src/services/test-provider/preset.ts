import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { z } from 'zod'
import { closest } from '../../../util/closest.js'
import { brokerError } from '../../errors/index.js'
import { FLOW_PRESET_NAMES } from '../store/presets.js'

/** A provider preset: the flow to store and the provider's quirks, as data (fixtures/providers/*.json). */
export const providerSchema = z
  .object({
    title: z.string(),
    flow: z.enum(FLOW_PRESET_NAMES as [string, ...string[]]),
    /** Record fields stored as they are (URLs, signature_method, client_auth, …). */
    record: z.record(z.union([z.string(), z.number(), z.boolean()])),
    /** The user's profile endpoint (GET with the access token), filled into a record with `profile: true`. */
    profile_url: z.string().url().optional(),
    /** The provider issues web apps a client secret it requires at the token endpoint: `broker store` asks for it. */
    confidential: z.boolean().default(false),
    scopes: z.array(z.string()).default([]),
    /** How this provider separates scopes (GitHub and Google: space; Facebook: comma). */
    scope_separator: z.string().default(' '),
    pkce: z.boolean().default(true),
    authorize_params: z.record(z.string()).default({}),
    /** How the token endpoint answers and which Accept it needs; the broker accepts JSON and form. */
    token: z
      .object({ format: z.enum(['json', 'form']).default('json'), accept: z.string().optional() })
      .strict()
      .default({}),
    /** The API called with the result: where, and how the token is sent. */
    api: z
      .object({
        url: z.string().url(),
        method: z.string().default('GET'),
        accept: z.string().default('application/json'),
        send_token: z.enum(['header', 'query', 'oauth1']).default('header'),
        scheme: z.string().default('Bearer'),
        query_param: z.string().default('access_token'),
        headers: z.record(z.string()).default({}),
      })
      .strict(),
    notes: z.string().optional(),
  })
  .strict()

export type ProviderPreset = z.infer<typeof providerSchema> & { name: string }

/**
 * The built-in presets' names, for help texts (static: oclif writes them into its manifest). A test
 * holds it equal to fixtures/providers, which knownProviders() reads.
 */
export const BUILT_IN_PROVIDERS = [
  'facebook',
  'github',
  'gitlab',
  'google',
  'microsoft',
  'notion',
  'quickbooks',
  'salesforce',
  'slack',
  'x',
  'x2',
] as const

/** Where the built-in presets live: fixtures/providers under the package root. */
export const presetsDir = (root: string) => join(root, 'fixtures', 'providers')

/** Names of the built-in provider presets. */
export function knownProviders(root: string): string[] {
  const dir = presetsDir(root)
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .map((f) => basename(f, '.json'))
        .sort()
    : []
}

/** A built-in preset by name, or the one in `file`; UNKNOWN_PROVIDER lists the known ones. */
export function loadPreset(opts: { root: string; name?: string; file?: string; cwd?: string }): ProviderPreset {
  const known = knownProviders(opts.root)
  let path: string
  if (opts.file) path = resolve(opts.cwd ?? process.cwd(), opts.file)
  else if (opts.name && known.includes(opts.name)) path = join(presetsDir(opts.root), `${opts.name}.json`)
  else
    throw brokerError('unknownProvider', {
      name: opts.name,
      known,
      suggestion: opts.name === undefined ? undefined : closest(opts.name, known),
    })
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'))
  } catch (err) {
    throw brokerError('presetUnreadable', {
      file: path,
      reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message,
    })
  }
  const parsed = providerSchema.safeParse(raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw brokerError('presetInvalid', { file: path, field: issue.path.join('.'), problem: issue.message })
  }
  return { ...parsed.data, name: opts.name ?? basename(path, '.json') }
}
