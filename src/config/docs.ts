import { CONFIG_KEYS } from './keys.js'

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
export function withConfigTable(page: string): string {
  const start = page.indexOf(TABLE_START)
  const end = page.indexOf(TABLE_END)
  if (start < 0 || end < start) throw new Error(`docs/configuration.md has no "${TABLE_START}" … "${TABLE_END}" block`)
  return `${page.slice(0, start + TABLE_START.length)}\n${configTable()}\n${page.slice(end)}`
}
