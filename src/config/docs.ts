import { GUARDIAN_KEYS } from './guardian.js'
import { CONFIG_KEYS, envName } from './keys.js'

/** docs/configuration.md's table sits between these two lines. */
export const TABLE_START =
  '<!-- config-table: written from src/config/schema.ts and keys.ts by `npx vitest run src/config/docs.test.ts -u` -->'
export const TABLE_END = '<!-- /config-table -->'

const cell = (text: string) => text.replace(/\|/g, '\\|')
const code = (text: string) => `\`${text}\``

/** The configuration table in Markdown: one row per key, from the schema. */
export function configTable(): string {
  const rows = CONFIG_KEYS.map((k) => {
    // A value the schema gives is code; a description of what happens without one is prose.
    const def = k.shown ?? (k.defaultText === undefined ? 'none' : code(k.defaultText))
    const flag = k.kind === 'boolean' ? `--[no-]${k.flag}` : `--${k.flag}`
    return `| ${code(k.key)} | ${cell(def)} | ${code(k.env)} | ${code(flag)}${k.char ? `, ${code(`-${k.char}`)}` : ''} | ${cell(k.help)} |`
  })
  return ['| Key | Default | Environment | Flag | Meaning |', '|---|---|---|---|---|', ...rows].join('\n')
}

/** `page` with the text between the table markers replaced by configTable(). */
export const withConfigTable = (page: string): string => between(page, TABLE_START, TABLE_END, configTable())

/** docs/configuration.md's "Coming from Guardian" table sits between these two lines. */
export const GUARDIAN_START =
  '<!-- guardian-table: written from src/config/guardian.ts by `npx vitest run src/config/docs.test.ts -u` -->'
export const GUARDIAN_END = '<!-- /guardian-table -->'

/** The "Coming from Guardian" table: each Guardian option, the broker key that takes it, what differs. */
export function guardianTable(): string {
  const rows = GUARDIAN_KEYS.map(
    (g) => `| ${code(g.guardian)} | ${code(g.broker)} | ${code(envName(g.broker.split('.')))} | ${cell(g.note)} |`,
  )
  return ['| Guardian | Broker | Environment | Notes |', '|---|---|---|---|', ...rows].join('\n')
}

/** `page` with both generated tables written again. */
export const withGeneratedTables = (page: string): string =>
  between(withConfigTable(page), GUARDIAN_START, GUARDIAN_END, guardianTable())

/** `page` with the text between two marker lines replaced by `table`. */
function between(page: string, startMark: string, endMark: string, table: string): string {
  const start = page.indexOf(startMark)
  const end = page.indexOf(endMark)
  if (start < 0 || end < start) throw new Error(`docs/configuration.md has no "${startMark}" … "${endMark}" block`)
  return `${page.slice(0, start + startMark.length)}\n${table}\n${page.slice(end)}`
}
