/** pdk.vault: secret references `{vault://<name>/<resource>/<key>?<options>#<version>}`. */
import type { Context, Table } from './context.js'
import { decodeArgs, unescape } from './private/args.js'
import { luaType, values, Values } from './private/values.js'

export interface ParsedReference {
  name: string
  resource: string
  key?: string
  config?: Table
  version?: number
}

/** True when the text starts with `{vault://` and ends with `}` (no deeper validation). */
export const isReference = (reference: unknown): reference is string =>
  typeof reference === 'string' && reference.startsWith('{vault://') && reference.endsWith('}')

/** Parses a reference into its parts, or (nil, err) with Kong's messages. */
export function parseReference(reference: unknown): ParsedReference | Values {
  if (!isReference(reference)) return values(undefined, `not a reference [${String(reference)}]`)
  let url: URL
  try {
    url = new URL(reference.slice(1, -1))
  } catch (e) {
    return values(undefined, `reference is not url (${(e as Error).message}) [${reference}]`)
  }
  const name = url.host
  if (!name) return values(undefined, `reference url is missing host [${reference}]`)
  if (!url.pathname) return values(undefined, `reference url is missing path [${reference}]`)
  const path = url.pathname.slice(1)
  if (path === '') return values(undefined, `reference url has empty path [${reference}]`)
  let version: number | undefined
  if (url.hash) {
    const v = url.hash.slice(1)
    if (!/^\d+$/.test(v)) return values(undefined, `reference url has invalid version [${reference}]`)
    version = Number(v)
  }
  const isDirectory = path.endsWith('/')
  const parts = path.split('/').filter((p) => p !== '')
  if (parts.length === 0) return values(undefined, `reference url has invalid path [${reference}]`)
  let resource: string
  let key: string | undefined
  if (parts.length === 1) resource = unescape(parts[0]!, false)
  else if (isDirectory) resource = unescape(parts.join('/'), false)
  else {
    resource = unescape(parts.slice(0, -1).join('/'), false)
    key = unescape(parts[parts.length - 1]!, false)
  }
  const query = url.search.slice(1)
  const parsed: ParsedReference = { name, resource }
  if (key !== undefined) parsed.key = key
  if (query) parsed.config = decodeArgs(query, 100).args
  if (version !== undefined) parsed.version = version
  return parsed
}

/** Builds pdk.vault over the env-style vaults the fixture gives (`{"env": {"NAME": "value"}}`). */
export function createVault(ctx: Context, log: { warn: (msg: string) => void }) {
  const lookup = (ref: ParsedReference): string | Values => {
    const vault = ctx.data.vaults[ref.name]
    if (!vault) return values(undefined, `could not find vault (${ref.name})`)
    const prefix = typeof ref.config?.prefix === 'string' ? ref.config.prefix : ''
    let name = (prefix + ref.resource).replace(/-/g, '_').toUpperCase()
    if (ref.version === 2) name += '_PREVIOUS'
    // Kong negatively caches any failure of the strategy and reports it wrapped
    const failed = (err: string) => values(undefined, `could not get value from external vault (${err})`)
    const value = vault[name]
    if (value === undefined) return failed('no value found')
    if (ref.key === undefined) return value
    let json: unknown
    try {
      json = JSON.parse(value)
    } catch (e) {
      return failed(`could not get subfield value: unable to json decode value (nil): ${(e as Error).message}`)
    }
    if (typeof json !== 'object' || json === null)
      return failed(`could not get subfield value: unable to json decode value (${String(json)}): nil`)
    const sub = (json as Table)[ref.key]
    if (sub === undefined) return failed(`could not get subfield value: subfield ${ref.key} not found in JSON secret`)
    // a JSON null is cjson.null, a userdata in Lua
    const type = sub === null ? 'userdata' : luaType(sub)
    if (typeof sub !== 'string')
      return failed(`could not get subfield value: unexpected ${type} value in JSON secret for subfield ${ref.key}`)
    return sub
  }
  const get = (reference: string): string | Values => {
    const parsed = parseReference(reference)
    return parsed instanceof Values ? parsed : lookup(parsed)
  }
  // as Kong's update: a reference that does not resolve leaves '' in its place, warned of
  const fresh = (ref: unknown): string => {
    const v = typeof ref === 'string' ? get(ref) : values(undefined, `not a reference [${String(ref)}]`)
    if (typeof v === 'string') return v
    log.warn(`error updating secret reference ${String(ref)}: ${String(v.list[1])}`)
    return ''
  }
  const update = (options: Table): Table => {
    if (typeof options !== 'object' || options === null) return options
    for (const [k, v] of Object.entries(options)) {
      if (k !== '$refs' && typeof v === 'object' && v !== null) update(v as Table)
    }
    const refs = options.$refs as Table | undefined
    if (!refs || typeof refs !== 'object') return options
    for (const [field, ref] of Object.entries(refs)) {
      if (typeof ref !== 'object' || ref === null) {
        options[field] = fresh(ref)
        continue
      }
      // an array's, a set's or a map's references, by key; a Lua array's with holes crossed keyed from 1
      const target = options[field]
      if (typeof target !== 'object' || target === null) continue
      const lua = Array.isArray(target) && !Array.isArray(ref)
      for (const [key, r] of Object.entries(ref as Table)) {
        ;(target as Table)[lua ? String(Number(key) - 1) : key] = fresh(r)
      }
    }
    return options
  }
  return {
    is_reference: (reference: unknown): boolean => isReference(reference),
    parse_reference: (reference: unknown) => parseReference(reference),
    get,
    update,
    flush(): void {},
    init_worker(): void {},
    warmup(): void {},
  }
}
