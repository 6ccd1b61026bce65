/**
 * Writes docs/errors.md from the error registry: every code with its HTTP status (where an HTTP
 * answer can carry it), its CLI exit code and next step, and every message filed under it.
 *
 *   npm run docs:errors                               # the same as node --import tsx scripts/errors-doc.ts
 *   node --import tsx scripts/errors-doc.ts           # writes docs/errors.md
 *   node --import tsx scripts/errors-doc.ts --check   # exits 1 when docs/errors.md is not what it writes
 *
 * test/docs.test.ts runs the same comparison, so the page cannot drift from the registry.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CLI_ERRORS } from '../src/errors/cli.js'
import { CONFIG_ERRORS } from '../src/errors/config.js'
import { HTTP_ERRORS } from '../src/errors/http.js'
import { ERRORS, MESSAGES } from '../src/errors/index.js'
import { PDK_ERRORS } from '../src/errors/pdk.js'

export const ERRORS_DOC = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'errors.md')

interface CodeSpec {
  readonly status?: number
  readonly exit: 1 | 2
  readonly next?: string
}
interface Message {
  readonly code: string
  readonly text: string | ((values: never) => string)
  readonly details?: Readonly<Record<string, unknown>> | ((values: never) => Readonly<Record<string, unknown>>)
  readonly next?: string
}

/**
 * A stand-in for a throw site's value named `name`: it prints as `<name>`, and acts enough like a
 * list (join, map, length) or a map of fields (one `<field>: <problem>` entry) for every template to
 * render its sentence with the placeholders where the values go.
 */
function placeholder(name: string): unknown {
  const shown = `<${name}>`
  const target = Object.assign(() => shown, {})
  return new Proxy(target, {
    get(_, key) {
      if (key === Symbol.toPrimitive || key === 'toString' || key === 'valueOf') return () => shown
      if (key === 'join') return () => shown
      if (key === 'map') return (f: (item: unknown) => unknown) => [f(placeholder(name))]
      if (key === 'length') return 2
      if (key === '<field>') return '<problem>'
      if (typeof key === 'symbol') return undefined
      return placeholder(key)
    },
    ownKeys: () => ['<field>', 'prototype', 'length', 'name'].filter((k) => k === '<field>' || k in target),
    getOwnPropertyDescriptor(t, key) {
      if (key === '<field>') return { value: '<problem>', enumerable: true, configurable: true, writable: true }
      return Reflect.getOwnPropertyDescriptor(t, key)
    },
  })
}

const values = new Proxy({}, { get: (_, key) => (typeof key === 'string' ? placeholder(key) : undefined) }) as never

/** A message's sentence with `<name>` where the throw site's values go (a number computed from one shows as `<n>`). */
export function messageTemplate(message: Message): string {
  const text = typeof message.text === 'string' ? message.text : message.text(values)
  return text.replace(/NaN/g, '<n>')
}

/** The extra fields a message adds to the JSON body (`fields`, `plugin` …). */
function extras(message: Message): string[] {
  if (!message.details) return []
  const details = typeof message.details === 'function' ? message.details(values) : message.details
  return Object.keys(details)
}

/** A code span, with a longer fence when the text holds a backquote (a message quoting `broker …`). */
const code = (text: string) => (text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``)
const cell = (text: string) => text.replace(/\|/g, '\\|')

/** The registry's parts, each a section of the page. */
const AUDIENCES = [
  {
    title: 'Answered by the HTTP API',
    about: 'Codes an HTTP answer carries, with its status; the CLI shows them too when a broker answered so.',
    codes: HTTP_ERRORS as object,
  },
  {
    title: 'Configuration',
    about: 'A configuration that cannot work: `broker serve` and the commands that load one refuse to start.',
    codes: CONFIG_ERRORS as object,
  },
  {
    title: 'CLI',
    about: 'What only a `broker` command says; no request is answered with these.',
    codes: CLI_ERRORS as object,
  },
  {
    title: 'PDK',
    about: "What `broker pdk run` (and the dashboard's PDK panel) says about a fixture or a plugin server.",
    codes: PDK_ERRORS as object,
  },
]

/** What a code's section says: its status and exit code, its next step, and each message filed under it. */
function codeSection(name: string, spec: CodeSpec, messages: ReadonlyArray<[string, Message]>): string[] {
  const answered = spec.status === undefined ? 'No HTTP answer carries it' : `HTTP status ${spec.status}`
  const out = [`${answered}; exit code ${spec.exit}.${spec.next ? ` Next step: ${spec.next}` : ''}`]
  const own = messages.filter(([, m]) => m.code === name)
  if (own.length) out.push('')
  for (const [id, message] of own) {
    const more = extras(message)
    const tail = [
      more.length ? `adds ${more.map(code).join(', ')}` : '',
      message.next ? `next step: ${message.next}` : '',
    ].filter(Boolean)
    const text = code(messageTemplate(message).replace(/\n\s*/g, ' '))
    out.push(`- ${code(id)}: ${text}${tail.length ? ` (${tail.join('; ')})` : ''}`)
  }
  return out
}

/** docs/errors.md, from the registry. */
export function errorsDoc(): string {
  const codes = Object.entries(ERRORS as Readonly<Record<string, CodeSpec>>)
  const audience = (name: string) => AUDIENCES.find((a) => name in a.codes)!
  const messages = Object.entries(MESSAGES as Readonly<Record<string, Message>>)
  const out = [
    '# Errors',
    '',
    '<!-- Written by `node --import tsx scripts/errors-doc.ts` from the error registry (src/errors/); do not edit. -->',
    '',
    'Every error the broker answers or a `broker` command prints comes from one registry. A code means the same',
    'everywhere: the HTTP API answers it as JSON `{"code","message", …}` with its status, never a stack trace or a',
    'file path; a command prints `Error <CODE>: <message>` and the next step on stderr (or',
    '`{"error":{"code","message", …}}` under `--json`) and exits with the code\'s exit code: `2` for bad input or',
    "usage, `1` for a failure. Each message is a template under an id (`brokerError('<id>', { …values })`), so",
    'the same failure reads the same wherever it is raised; `<name>` below marks a value the throw site passes.',
    '',
    "A failure inside a flow reaches the app's callback as `broker_error=<CODE>` beside the OAuth `error`",
    '([http-api.md](http-api.md#delivery)).',
  ]
  for (const a of AUDIENCES) {
    const own = codes.filter(([n]) => audience(n) === a)
    out.push(
      '',
      `## ${a.title}`,
      '',
      a.about,
      '',
      '| Code | HTTP status | Exit code | Next step |',
      '|---|---|---|---|',
    )
    for (const [name, spec] of own)
      out.push(
        `| [${code(name)}](#${name.toLowerCase()}) | ${spec.status ?? '—'} | ${spec.exit} | ${cell(spec.next ?? '—')} |`,
      )
    for (const [name, spec] of own) out.push('', `### ${code(name)}`, '', ...codeSection(name, spec, messages))
  }
  return out.join('\n') + '\n'
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const text = errorsDoc()
  if (process.argv.includes('--check')) {
    const current = readFileSync(ERRORS_DOC, 'utf8')
    if (current !== text) {
      process.stderr.write('docs/errors.md differs from the registry: run node --import tsx scripts/errors-doc.ts\n')
      process.exit(1)
    }
  } else writeFileSync(ERRORS_DOC, text)
}
