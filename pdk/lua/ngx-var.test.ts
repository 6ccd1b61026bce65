import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadFixture } from '../fixture/index.js'
import { runScenario } from '../runner/index.js'
import { preparePlugins } from '../runner/plugins.js'

// ngx.var from a Lua plugin, through the runner as `broker pdk run` replays it: the warning for a variable nginx has
// and broker does not answer reaches the replay's log, naming the plugin and the variable, and fails nothing.
const dir = mkdtempSync(join(tmpdir(), 'pdk-lua-ngx-var-'))
mkdirSync(join(dir, 'kong', 'plugins', 'var-reader'), { recursive: true })
writeFileSync(
  join(dir, 'kong', 'plugins', 'var-reader', 'handler.lua'),
  `return { PRIORITY = 10, VERSION = "1", access = function()
  local dn, again, own = ngx.var.ssl_client_s_dn, ngx.var.ssl_client_s_dn, ngx.var.my_own_variable
  kong.response.set_header("x-read", tostring(dn) .. " " .. tostring(again) .. " " .. tostring(own))
  kong.response.set_header("x-request-id", ngx.var.kong_request_id == ngx.var.request_id and "same" or "differs")
end }`,
)
const file = join(dir, 'f.json')
writeFileSync(
  file,
  JSON.stringify({
    name: 'reads variables',
    request: { url: 'https://api.test/' },
    plugins: [{ module: join(dir, 'kong', 'plugins', 'var-reader') }],
  }),
)

describe('ngx.var in a Lua plugin', () => {
  it('reads a variable broker does not emulate as nil, with one warn line naming it; an unknown one silently', async () => {
    const fixture = loadFixture(file)
    const r = await runScenario(fixture, await preparePlugins(fixture), {}, {})
    expect(r.response.headers['x-read']).toBe('nil nil nil')
    expect(r.response.headers['x-request-id']).toBe('same')
    const warnings = r.logs.filter((l) => l.level === 'warn').map((l) => l.line)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(
      /\[var-reader\] ngx\.var\.ssl_client_s_dn reads nil: broker does not emulate nginx's \$ssl_client_s_dn/,
    )
    expect(r.logs.some((l) => l.line.includes('my_own_variable'))).toBe(false)
    expect(r.failures).toEqual([])
  })
})
