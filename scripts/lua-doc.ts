/**
 * Writes the tables of docs/lua-plugins.md that mirror the Lua face's manifest (pdk/lua/manifest/): the modules a
 * Lua plugin may require and nginx's variables, each with what broker does with it. Only the text between the
 * page's two markers is written; the prose around it is the page's own.
 *
 *   npm run docs:lua                               # the same as node --import tsx scripts/lua-doc.ts
 *   node --import tsx scripts/lua-doc.ts --check   # exits 1 when docs/lua-plugins.md is not what it writes
 *
 * pdk/lua/manifest/doc.test.ts runs the same comparison, so the page cannot drift from the manifest.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { MODULES, NGINX_VARIABLES, type LuaModule, type NginxVariable } from '../pdk/lua/manifest/index.js'

export const LUA_DOC = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'lua-plugins.md')
export const BEGIN = '<!-- lua-manifest: begin (written by npm run docs:lua from pdk/lua/manifest/; do not edit) -->'
export const END = '<!-- lua-manifest: end -->'

const cell = (text: string) => text.replace(/\|/g, '\\|')
const byName = <T extends { name: string }>(xs: readonly T[]) => [...xs].sort((a, b) => a.name.localeCompare(b.name))

const moduleRow = (m: LuaModule) => {
  const text = m.status === 'not emulated' ? `requiring it stops the run: ${m.doc}` : m.doc
  const onUse = m.onUse ? `; a call of its functions stops the run: ${m.onUse}` : ''
  const unlisted = m.unlisted ? `; another submodule is refused: ${m.unlisted}` : ''
  return `| \`${m.name}\` | ${m.status} | ${cell(text + onUse + unlisted)} |`
}

const variableRow = (v: NginxVariable) => `| \`${v.name}\` | ${v.status} | ${v.from} | ${cell(v.doc)} |`

/** The generated part of docs/lua-plugins.md, markers included. */
export function luaDocSection(): string {
  return [
    BEGIN,
    '',
    '### Modules',
    '',
    "An emulated module is broker's own and wins over a same-named file on any Lua root; a fallback is broker's own",
    "too but searched last, after the system folders, so a root's or `lua_path`'s module of that name is used",
    'instead; requiring one that is not emulated stops the run (`LUA_MODULE_UNSUPPORTED`, with the hint below). A',
    'module in none of these is looked for on the Lua roots (`LUA_MODULE_NOT_FOUND` when it is on none).',
    '',
    '| Module | Status | In a replay |',
    '|---|---|---|',
    ...byName(MODULES).map(moduleRow),
    '',
    '### nginx variables',
    '',
    '`ngx.var.<name>` as the nginx modules Kong is built with and its nginx template give it. An emulated variable',
    "has the value nginx would give from the replay's request; a fallback one a stand-in value, the same in every",
    'replay; one that is not emulated reads nil, and the first read in a request logs a `warn` line naming it',
    "(`ngx.var.<name> reads nil: broker does not emulate nginx's $<name> (…)`). A name nginx does not have reads",
    'nil silently, as in OpenResty. A name ending in `*` is a family (`http_x_api_key`).',
    '',
    '| Variable | Status | From | In a replay |',
    '|---|---|---|---|',
    ...byName(NGINX_VARIABLES).map(variableRow),
    '',
    END,
  ].join('\n')
}

/** docs/lua-plugins.md with its generated part written anew. */
export function luaDoc(current: string): string {
  const start = current.indexOf(BEGIN)
  const end = current.indexOf(END)
  if (start === -1 || end < start) throw new Error(`docs/lua-plugins.md has no "${BEGIN}" … "${END}" part`)
  return current.slice(0, start) + luaDocSection() + current.slice(end + END.length)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const current = readFileSync(LUA_DOC, 'utf8')
  const text = luaDoc(current)
  if (process.argv.includes('--check')) {
    if (current !== text) {
      process.stderr.write('docs/lua-plugins.md differs from pdk/lua/manifest/: run npm run docs:lua\n')
      process.exit(1)
    }
  } else writeFileSync(LUA_DOC, text)
}
