import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadFixture } from '../fixture/index.js'
import { runScenario } from '../runner/index.js'
import { closePlugins, preparePlugins } from '../runner/plugins.js'
import { runSpecFile, type SpecResult } from './session.js'
import { badgeRoot } from './testing/badge.js'

// broker pdk test --record: a spec of our own against the badge plugin and a counting one (state in
// ngx.shared, a header read from the clock, an [error] line), recorded, each fixture replayed by the
// runner of `broker pdk run`.

const LIMIT = `
local Limit = { PRIORITY = 900, VERSION = "1" }
function Limit:access(conf)
  local dict = ngx.shared.kong_rate_limiting_counters
  local key = (conf.route_id or "-") .. ":" .. (kong.client.get_consumer() or {}).username
  local used = dict:get(key) or 0
  kong.response.set_header("x-reset", tostring(60 - math.floor(ngx.now()) % 60))
  if used >= conf.limit then
    kong.log.err("limit reached for ", key)
    return kong.response.exit(429, { message = "slow down" })
  end
  dict:incr(key, 1, 0, 60)
end
return Limit`

const SPEC = `
local helpers = require "spec.helpers"
describe("recorded", function()
  local proxy
  lazy_setup(function()
    local bp = helpers.get_db_utils("postgres", nil, { "badge", "limit" })
    local route = bp.routes:insert({ hosts = { "rec.test" } })
    bp.plugins:insert({ name = "badge", route = { id = route.id } })
    bp.plugins:insert({ name = "limit", route = { id = route.id }, config = { limit = 2 } })
    bp.plugins:insert({ name = "stamp", config = { value = "global" } })
    local ann = bp.consumers:insert({ username = "ann" })
    bp.badges:insert({ key = "k-ann", consumer = { id = ann.id } })
    assert(helpers.start_kong({ plugins = "bundled,badge,limit" }))
    proxy = helpers.proxy_client()
  end)
  it("lets ann through twice, then 429", function()
    local function send() return proxy:get("/request", { headers = { host = "rec.test", ["x-badge"] = "k-ann" } }) end
    assert.res_status(200, send())
    ngx.sleep(7)
    assert.res_status(200, send())
    local r = send()
    assert.res_status(429, r)
    assert.logfile().has.line("limit reached", true)
  end)
  it("refuses no badge", function()
    assert.res_status(401, proxy:get("/request", { headers = { host = "rec.test" } }))
  end)
end)`

/** The fields of a recorded fixture the test reads. */
interface Recorded {
  name: string
  route: { id: string }
  ngx_shared: Record<string, Record<string, unknown>>
  plugins: Array<{ name: string; route?: { id: string } }>
  expect: { status: number; errors?: string[] }
}

/** Runs SPEC with --record into a new folder; the results and the fixtures written. */
async function record(): Promise<{ results: SpecResult[]; files: string[] }> {
  const root = badgeRoot({
    'spec/rec_spec.lua': SPEC,
    'kong/plugins/limit/handler.lua': LIMIT,
    'kong/plugins/limit/schema.lua': `return { name = "limit", fields = { { config = { type = "record", fields = {
  { limit = { type = "integer", required = true } } } } } } }`,
  })
  const dir = mkdtempSync(join(tmpdir(), 'spec-record-'))
  const files: string[] = []
  const results = await runSpecFile({
    root,
    file: join(root, 'spec/rec_spec.lua'),
    shown: 'spec/rec_spec.lua',
    timeoutMs: 10_000,
    record: dir,
    recorded: files,
  })
  return { results, files }
}

/** Replays a fixture as `broker pdk run` does: its verdict's failures and the response. */
async function replay(file: string) {
  const loaded = loadFixture(file)
  const plugins = await preparePlugins(loaded)
  try {
    const r = await runScenario(loaded, plugins)
    return { failures: r.failures, status: r.response.status }
  } finally {
    closePlugins(plugins)
  }
}

describe('broker pdk test --record', () => {
  it('writes one fixture per proxied request, each replayed by pdk run to the same answer', async () => {
    const { results, files } = await record()
    expect(results.map((r) => `${r.status} ${r.name}`)).toEqual([
      'success recorded lets ann through twice, then 429',
      'success recorded refuses no badge',
    ])
    expect(files.map((f) => f.replace(/^.*\//, ''))).toEqual([
      'spec_rec_spec.001.json',
      'spec_rec_spec.002.json',
      'spec_rec_spec.003.json',
      'spec_rec_spec.004.json',
    ])
    expect(readdirSync(join(files[0]!, '..')).sort()).toEqual(files.map((f) => f.replace(/^.*\//, '')))
    const third = JSON.parse(readFileSync(files[2]!, 'utf8')) as Recorded
    expect(third.name).toBe('spec/rec_spec.lua:21 recorded lets ann through twice, then 429: GET /request')
    expect(third.expect.status).toBe(429)
    expect(Object.values(third.ngx_shared.kong_rate_limiting_counters!)).toEqual([{ value: 2, ttl: 53 }])
    // the instances that ran: stamp (PRIORITY 800) is not reached once limit (900) has answered
    const names = (f: string) =>
      (JSON.parse(readFileSync(f, 'utf8')) as { plugins: Array<{ name: string }> }).plugins.map((p) => p.name)
    expect(names(files[0]!).sort()).toEqual(['badge', 'limit', 'stamp'])
    expect(names(files[2]!).sort()).toEqual(['badge', 'limit'])
    expect(third.plugins.find((p) => p.name === 'limit')!.route).toEqual({ id: third.route.id })
    expect(third.expect.errors).toEqual([expect.stringContaining('limit reached for ')])
    const replays = await Promise.all(files.map(replay))
    expect(replays.map((r) => r.status)).toEqual([200, 200, 429, 401])
    expect(replays.map((r) => r.failures)).toEqual([[], [], [], []])
  })

  it('a replay that would answer otherwise fails its verdict: the state and the clock are what make it the same', async () => {
    const { files } = await record()
    const third = JSON.parse(readFileSync(files[2]!, 'utf8')) as Record<string, unknown>
    // without the counters the request found, the plugin lets it through
    writeFileSync(files[2]!, JSON.stringify({ ...third, ngx_shared: {} }))
    const emptied = await replay(files[2]!)
    expect(emptied.status).toBe(200)
    expect(emptied.failures.map((f) => f.path)).toContain('$.expect.status')
    // at another time, the window's reset differs
    writeFileSync(files[2]!, JSON.stringify({ ...third, time: (third.time as number) + 1 }))
    expect((await replay(files[2]!)).failures.map((f) => f.path)).toEqual(['$.expect.headers.x-reset'])
  })
})
