import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { FlowPlugin } from '../flows/contract.js'
import { errorsDoc } from '../scripts/errors-doc.js'
import { CONFIG_KEYS } from '../src/config/keys.js'
import { PROGRESS } from '../src/broker/store/flow-codec.js'
import { ERRORS } from '../src/errors/index.js'
import { RECORD_FIELDS } from '../src/services/store/fields.js'

// The docs against the code: every flag, config key, error code and record field the code has is
// documented, and the docs name none the code does not have. A failure names the page and the thing.

const root = join(import.meta.dirname, '..')
const read = (file: string) => readFileSync(join(root, file), 'utf8')

/** Every Markdown file under `dir`, relative to the root. */
function markdown(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdown(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  )
}
const PAGES = ['README.md', 'CHANGELOG.md', ...markdown('docs')]
/** Pages that describe the code as it is (decision records and the changelog are history). */
const CURRENT = PAGES.filter((p) => p !== 'CHANGELOG.md' && !p.startsWith('docs/decisions/'))

/** Text outside fenced code blocks. */
const prose = (text: string) => text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '')
/** The contents of every inline code span. */
const spans = (text: string) => [...prose(text).matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!)

/** The Markdown section under `heading` (a line that starts with it), up to the next heading of its level or above; code blocks left out. */
function section(text: string, heading: string): string {
  const lines = prose(text).split('\n')
  const start = lines.findIndex((l) => l.startsWith(heading))
  if (start < 0) throw new Error(`no section "${heading}"`)
  const level = heading.match(/^#+/)![0].length
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && l.match(/^#+/)![0].length <= level)
  return lines.slice(start, end < 0 ? undefined : end).join('\n')
}

/** The rows of every table in `text` whose header's first cell is `first`, split into cells. */
function tableRows(text: string, first: string): string[][] {
  const rows: string[][] = []
  let inTable = false
  for (const line of prose(text).split('\n')) {
    if (!line.startsWith('|')) {
      inTable = false
      continue
    }
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim())
    if (cells[0] === first) inTable = true
    else if (inTable && !/^-+$/.test(cells[0]!)) rows.push(cells)
  }
  return rows
}

const codeNames = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)

describe('error codes', () => {
  it('docs/errors.md is what scripts/errors-doc.ts writes from the registry', () => {
    // On a failure: npm run docs:errors (node --import tsx scripts/errors-doc.ts)
    expect(read('docs/errors.md')).toBe(errorsDoc())
  })

  // Upper-case words in code spans that are not error codes; anything else in capitals must be one.
  const ENV = new Set([...CONFIG_KEYS.map((k) => k.env), 'BROKER_URL', 'BROKER_API_KEY', 'BROKER_VERBOSE'])
  const NOT_CODES = new Set(
    (
      'GET POST SET GETDEL INCR SCAN SUBSCRIBE PUBLISH PEXPIRE SETRANGE DEBUG DIGEST NO_COLOR XDG_CONFIG_HOME ' +
      'DB_PASSWORD DEF TTY JSON PEM RSA DENY CODE HMAC URL HMAC_SHA1 PLAINTEXT RS256 PS256 ES256 ES384 ES512 HS256 ' +
      'HS384 HS512 EADDRINUSE WRONGTYPE NOREPLICAS OOM SIGTERM SIGINT SIGKILL SIGSTOP SIGCONT NAME PRIORITY VERSION ' +
      'LUA_PATH PATCH PUT DELETE HEAD OPTIONS KONG_PLUGIN_TEMPLATE KONG_SRC ' +
      // Kong's ngx.ctx fields and lua-resty-openssl's constants, named in docs/lua-plugins.md
      'KONG_PHASE KONG_PROCESSING_START KONG_PROXIED KONG_PROXY_LATENCY KONG_WAITING_TIME KONG_RECEIVE_TIME ' +
      'KONG_RESPONSE_LATENCY TLS1_PRF ' +
      // nginx variables' values, in docs/lua-plugins.md's table of them
      'OK SUCCESS NONE TLS_AES_256_GCM_SHA384 ' +
      // docs/pdk-test.md: the spec's Redis (found on PATH, or named by Kong's variable), the SQL its connector runs,
      // the Zipkin collector's address, use_old_plugin's older Kong (Kong's variables)
      'PATH KONG_SPEC_TEST_REDIS_HOST BEGIN COMMIT KONG_SPEC_TEST_ZIPKIN_HOST KONG_SPEC_TEST_ZIPKIN_PORT ' +
      'KONG_SPEC_TEST_OLD_VERSION_KONG_PATH'
    )
      .split(' ')
      .filter(Boolean),
  )
  const named = (text: string): string[] => [
    ...spans(text).filter((s) => /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/.test(s)),
    ...[...text.matchAll(/Error ([A-Z][A-Z_]+):|"code": ?"([A-Z][A-Z_]+)"|broker_error=([A-Z][A-Z_]+)/g)].map(
      (m) => (m[1] ?? m[2] ?? m[3])!,
    ),
  ]

  it.each(CURRENT)('%s names only codes the registry has', (page) => {
    const unknown = named(read(page)).filter((w) => !(w in ERRORS) && !ENV.has(w) && !NOT_CODES.has(w))
    expect(unknown, `${page} names error codes the registry does not have`).toEqual([])
  })
})

describe('configuration keys', () => {
  const KEYS = CONFIG_KEYS.map((k) => k.key as string)
  const SECTIONS = new Set(KEYS.map((k) => k.split('.')[0]!))
  // The PDK pages name kit functions (`log.serialize`, `request.get_header`), not configuration.
  const pages = CURRENT.filter((p) => !['docs/pdk.md', 'docs/fixture-format.md', 'docs/errors.md'].includes(p))

  it('docs/configuration.md has a row for every key of the schema', () => {
    const rows = tableRows(read('docs/configuration.md'), 'Key').map((r) => codeNames(r[0]!)[0])
    expect(rows).toEqual(KEYS)
  })

  it.each(pages)('%s names only keys the schema has', (page) => {
    const dotted = spans(read(page)).filter(
      (s) => /^[a-z]+(\.[A-Za-z*]+)+$/.test(s) && SECTIONS.has(s.split('.')[0]!) && !/\.(ts|js|json|md|lua)$/.test(s),
    )
    const known = (s: string) => {
      const re = new RegExp(`^${s.replace(/\./g, '\\.').replace(/\*/g, '[^.]+')}(\\.|$)`)
      return KEYS.some((k) => re.test(k))
    }
    expect(
      dotted.filter((s) => !known(s)),
      `${page} names configuration keys the schema does not have`,
    ).toEqual([])
  })
})

describe('CLI flags', () => {
  interface FlagDef {
    char?: string
    allowNo?: boolean
    type?: 'option' | 'boolean'
    summary?: string
    default?: unknown
    env?: string
    multiple?: boolean
  }
  interface CommandClass {
    flags?: Record<string, FlagDef>
    baseFlags?: Record<string, FlagDef>
    enableJsonFlag?: boolean
  }

  /** Every command of commands/ by id (`pdk run`) with its flags as they are typed (`--flow`, `-f`, `--no-x`). */
  async function commands(): Promise<Map<string, Set<string>>> {
    const found = new Map<string, Set<string>>()
    const walk = async (dir: string, prefix: string[]) => {
      for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
        if (e.isDirectory()) await walk(join(dir, e.name), [...prefix, e.name])
        else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) {
          const mod = (await import(pathToFileURL(join(root, dir, e.name)).href)) as { default: CommandClass }
          const cls = mod.default
          const all: Record<string, FlagDef> = { ...cls.baseFlags, ...cls.flags }
          const flags = new Set<string>(cls.enableJsonFlag ? ['--json'] : [])
          for (const [name, f] of Object.entries(all)) {
            flags.add(`--${name}`)
            if (f.allowNo) flags.add(`--no-${name}`)
            if (f.char) flags.add(`-${f.char}`)
          }
          found.set([...prefix, e.name.replace(/\.ts$/, '')].join(' '), flags)
        }
      }
    }
    await walk('commands', [])
    return found
  }

  /** Flags as a table's first cell writes them: `-f`, `--flow` <value>, `--[no-]api-open`. */
  const cellFlags = (cell: string): string[] =>
    codeNames(cell).flatMap((name) => {
      const m = name.match(/^--\[no-\](.+)$/)
      return m ? [`--${m[1]}`, `--no-${m[1]}`] : /^--?[a-zA-Z]/.test(name) ? [name.split(/[ =]/)[0]!] : []
    })

  const cli = read('docs/cli.md')
  // Every command takes these; `--help` / `-h` are oclif's own and in no command's flags.
  const common = new Set(
    tableRows(section(cli, '## Flags every command takes'), 'Flag').flatMap((r) => cellFlags(r[0]!)),
  )
  const builtIn = new Set(['--help', '-h'])

  /** The flags docs/cli.md documents for `broker <id>`: its section's Flag tables, and for serve the config table. */
  function documented(id: string): Set<string> {
    const own = tableRows(section(cli, `## \`broker ${id}`), 'Flag').flatMap((r) => cellFlags(r[0]!))
    const config =
      id === 'serve' ? tableRows(read('docs/configuration.md'), 'Key').flatMap((r) => cellFlags(r[3]!)) : []
    return new Set([...own, ...config])
  }

  it('docs/cli.md has a section for every command, and every command has each flag the section lists', async () => {
    const all = await commands()
    expect(all.size).toBeGreaterThan(5)
    for (const [id, flags] of all) {
      const docs = documented(id)
      for (const f of common) if (!builtIn.has(f)) expect(flags.has(f), `broker ${id} has no ${f}`).toBe(true)
      const missing = [...flags].filter((f) => !docs.has(f) && !common.has(f))
      // A `--no-x` exists for a boolean with allowNo; the docs may write the pair as `--[no-]x`, or only `--x`.
      const extra = [...docs].filter((f) => !flags.has(f) && !builtIn.has(f))
      expect(
        missing.filter((f) => !f.startsWith('--no-')),
        `broker ${id}: flags docs/cli.md does not list`,
      ).toEqual([])
      expect(extra, `broker ${id}: flags docs/cli.md lists that the command does not have`).toEqual([])
    }
    const sections = [...cli.matchAll(/^## `broker ([a-z-]+(?: [a-z-]+)?)/gm)].map((m) => m[1]!)
    expect(
      sections.filter((s) => !all.has(s)),
      'docs/cli.md has sections for commands that do not exist',
    ).toEqual([])
  })
  // broker store has the most flags, one per record field, and grows with the record: its table is
  // what the flags say, row for row (a flag missing, left over, or described otherwise fails here).
  it('docs/cli.md lists the flags of broker store as the command defines them, in its order', async () => {
    const cls = ((await import(pathToFileURL(join(root, 'commands/store.ts')).href)) as { default: CommandClass })
      .default
    const row = ([name, f]: [string, FlagDef]) => {
      const names = [f.char && `\`-${f.char}\``, f.allowNo ? `\`--[no-]${name}\`` : `\`--${name}\``]
      const extras = [
        f.default !== undefined && ` (default ${String(f.default)})`,
        f.env && ` (env \`${f.env}\`)`,
        f.multiple && ' Repeatable.',
      ]
      return `| ${names.filter(Boolean).join(', ')}${f.type === 'option' ? ' <value>' : ''} | ${f.summary ?? ''}${extras.filter(Boolean).join('')} |`
    }
    const table = section(section(cli, '## `broker store`'), '### Flags')
      .split('\n')
      .filter((l) => l.startsWith('| `'))
    expect(table).toEqual(Object.entries(cls.flags ?? {}).map(row))
  })
})

describe('record fields', () => {
  const api = read('docs/http-api.md')
  const tables = [section(api, '### OAuth 2'), section(api, '### OAuth 1.0a')]

  /** plugin → field → what its column says (`required`, `optional`, `required or \`issuer\``), from the Field tables. */
  function documented(): Map<string, Map<string, string>> {
    const out = new Map<string, Map<string, string>>()
    for (const text of tables) {
      const header = prose(text)
        .split('\n')
        .find((l) => l.startsWith('| Field |'))!
      const plugins = header
        .split('|')
        .slice(2, -2)
        .map((c) => codeNames(c)[0]!)
      for (const row of tableRows(text, 'Field')) {
        plugins.forEach((plugin, i) => {
          const says = row[i + 1]!
          if (says === '—') return
          const fields = out.get(plugin) ?? new Map<string, string>()
          for (const field of codeNames(row[0]!)) fields.set(field, says)
          out.set(plugin, fields)
        })
      }
    }
    return out
  }

  const flowFiles = readdirSync(join(root, 'flows')).filter((f) => f.endsWith('.ts') && f !== 'contract.ts')

  it('documents each built-in flow plugin, its required fields exactly as the plugin declares them', async () => {
    const docs = documented()
    expect([...docs.keys()].sort()).toEqual(flowFiles.map((f) => f.replace(/\.ts$/, '')).sort())
    for (const file of flowFiles) {
      const plugin = ((await import(pathToFileURL(join(root, 'flows', file)).href)) as { default: FlowPlugin }).default
      const name = file.replace(/\.ts$/, '')
      const required = [...docs.get(name)!].filter(([, says]) => says === 'required').map(([f]) => f)
      expect(required.sort(), `${name}: fields docs/http-api.md marks required`).toEqual(
        [...(plugin.required ?? [])].sort(),
      )
    }
  })

  // What the code reads of a record: `record.x`, `r.x`, `ctx.record.x` … in the flows and the broker.
  const sources = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? sources(join(dir, e.name))
        : /\.tsx?$/.test(e.name) && !e.name.includes('.test.')
          ? [read(join(dir, e.name))]
          : [],
    )
  const code = [...sources('flows'), ...sources('src/broker')].join('\n')
  const READ = new Set(
    [...code.matchAll(/\b(?:record|ctx\.record|r|normalized|sanitized)\.([a-z][a-z_]+)\b(?!')/g)]
      .map((m) => m[1]!)
      .filter((f) => f !== 'js'),
  )
  const all = () => new Set([...documented().values()].flatMap((fields) => [...fields.keys()]))

  it('documents every field the flows and the broker read from a record, and every field broker store has a flag for', () => {
    const docs = all()
    expect(
      [...READ].filter((f) => !docs.has(f)),
      'fields the code reads that docs/http-api.md does not list',
    ).toEqual([])
    expect(
      RECORD_FIELDS.map((f) => f.field).filter((f) => !docs.has(f)),
      'fields with a broker store flag that docs/http-api.md does not list',
    ).toEqual([])
  })

  it('lists no field the code never names', () => {
    const unknown = [...all()].filter((f) => !new RegExp(`\\b${f}\\b`).test(code))
    expect(unknown, 'fields docs/http-api.md lists that nothing in flows/ or src/broker/ names').toEqual([])
  })
})

describe('progress values', () => {
  it('docs/http-api.md has a row for each, and docs/dashboard.md names each as the dashboard shows it', () => {
    const rows = tableRows(section(read('docs/http-api.md'), '## Progress'), '`progress`').map(
      (r) => codeNames(r[0]!)[0],
    )
    expect(rows).toEqual([...PROGRESS])
    const dashboard = prose(read('docs/dashboard.md'))
    for (const progress of PROGRESS) expect(dashboard, progress).toContain(progress.replace(/_/g, ' '))
  })
})

describe('README', () => {
  const readme = read('README.md')
  const examples = (readme.match(/^```[^\n]*\n[\s\S]*?^```$/gm) ?? []).join('\n')

  // Issue 25 made these record fields the API: each is shown in an example, and linked to its section.
  it.each([
    ['resource (an MCP server)', /--resource |"resource":/, 'mcp-servers-resource-discovery-and-registration'],
    ['dpop_key / dpop', /--dpop|"dpop(_key)?":/, 'dpop-sender-constrained-tokens-rfc-9449'],
    ['profile', /--profile |"profile":/, 'the-users-profile-profile'],
    ['the device flow', /--flow device|"auth_flow": ?"device"/, 'the-device-flow-rfc-8628'],
  ])('shows %s in an example and links to its section', (_, example, section) => {
    expect(examples).toMatch(example)
    expect(prose(readme)).toContain(`(docs/http-api.md#${section})`)
  })

  it('starts with exactly two commands: install and run the broker, run the whole suite', () => {
    const first = /^# [^\n]+\n\n```sh\n([\s\S]*?)\n```\n/.exec(readme)?.[1] ?? ''
    expect(first.split('\n').map((line) => line.split('#')[0]!.trim())).toEqual(['npm ci && npm start', 'npm test'])
  })

  it("says that an authorization response's iss must match the issuer, or the origin of authorize_url without one", () => {
    expect(prose(readme)).toMatch(/`iss`[^\n]*\n?[^\n]*`issuer`[\s\S]{0,200}`authorize_url`/)
  })
})

describe('links', () => {
  /** GitHub's anchor of a heading: lowercased, punctuation but - and _ dropped, spaces to -. */
  const anchor = (heading: string) =>
    heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\- _]/gu, '')
      .replace(/ /g, '-')
  const anchors = (page: string) =>
    new Set(
      prose(read(page))
        .split('\n')
        .filter((l) => /^#{1,6} /.test(l))
        .map((l) => anchor(l.replace(/^#+ /, ''))),
    )

  it.each(PAGES)('every link in %s reaches a file and a heading', (page) => {
    const broken: string[] = []
    for (const [, target] of prose(read(page)).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue
      const [path, hash] = target!.split('#')
      const file = path ? normalize(join(dirname(page), path)) : page
      if (!existsSync(join(root, file))) broken.push(target!)
      else if (hash && file.endsWith('.md') && !anchors(relative('.', file)).has(hash)) broken.push(target!)
    }
    expect(broken, `${page}: links to nothing`).toEqual([])
  })
})

describe('the dashboard page', () => {
  it('counts the shipped PDK fixtures as the panel lists them, and names the flow presets New flow offers', async () => {
    const page = read('docs/dashboard.md')
    const { listFixtures } = await import('../src/services/dashboard/pdk.js')
    // The screen was captured in a checkout: its fixtures/pdk, not the package's.
    const inCheckout = listFixtures(join(root, 'fixtures/pdk')).length
    expect(page).toContain(`Fixtures in fixtures/pdk (${inCheckout})`)
    const { FLOW_PRESET_NAMES } = await import('../src/services/store/presets.js')
    const listed = /A form over the same presets[^(]*\(([^)]*)\)/.exec(page)![1]!.match(/`([^`]+)`/g)!
    expect(listed.map((s) => s.slice(1, -1))).toEqual(FLOW_PRESET_NAMES)
  })
})

describe('docs/dashboard.md', () => {
  // What the package ships is what npm packs (package.json "files", its exclusions included), not the checkout.
  it('says how many fixtures the package ships and a checkout has at the top of fixtures/pdk', () => {
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--ignore-scripts', '--json'], { cwd: root, encoding: 'utf8' }),
    ) as Array<{ files: Array<{ path: string }> }>
    const top = /^fixtures\/pdk\/[^/]+\.json$/
    const shipped = packed[0]!.files.filter((f) => top.test(f.path)).length
    const checkout = readdirSync(join(root, 'fixtures', 'pdk')).filter((f) => f.endsWith('.json')).length
    const page = read('docs/dashboard.md')
    expect(prose(page)).toContain(`the package ships ${shipped} at the top of its \`fixtures/pdk/\``)
    expect(prose(page)).toContain(`a checkout has ${checkout} there`)
  })
})
