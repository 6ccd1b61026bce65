import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { VARIABLES, writeRefusal } from './vars.js'

describe('nginx variables', () => {
  it('refuses writes as nginx does: an unknown name, and a built-in that cannot change', () => {
    expect(writeRefusal('args')).toBeUndefined()
    expect(writeRefusal('upstream_x_forwarded_prefix')).toBeUndefined()
    expect(writeRefusal('request_uri')).toBe('variable "request_uri" not changeable')
    expect(writeRefusal('http_host')).toBe('variable "http_host" not changeable')
    expect(writeRefusal('session_secret')).toBe(
      `variable "session_secret" not found for writing; maybe it is a built-in variable that is not changeable or you forgot to use "set $session_secret '';" in the config file to define it first`,
    )
  })

  it('docs/lua-plugins.md lists every variable broker answers', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../../docs/lua-plugins.md'), 'utf8').replace(/\s+/g, ' ')
    const section = doc.slice(
      doc.indexOf('nginx variables (`ngx.var.<name>`)'),
      doc.indexOf("LuaJIT's `string.buffer`"),
    )
    const listed = [...section.matchAll(/`([a-z0-9_]+\*?)`/g)].map((m) => m[1])
    expect(VARIABLES.filter((v) => !listed.includes(v))).toEqual([])
  })
})
