import { spawn, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runSpecFile, type SpecResult } from './session.js'
import { badgeRoot } from './testing/badge.js'

// What a spec reaches outside the VM, for real: the Redis of helpers.redis_host/redis_port (a
// redis-server started for the spec file and stopped after it), resty.redis over ngx.socket.tcp, and
// resty.shell. Needs redis-server on PATH (listed in vitest.config.ts's PEERS).
async function run(spec: string): Promise<{ results: SpecResult[]; printed: string[] }> {
  const root = badgeRoot({ 'spec/x_spec.lua': spec })
  const printed: string[] = []
  const results = await runSpecFile({
    root,
    file: join(root, 'spec/x_spec.lua'),
    shown: 'spec/x_spec.lua',
    timeoutMs: 10_000,
    print: (l) => printed.push(l),
  })
  return { results, printed }
}
const failing = (rs: SpecResult[]) =>
  rs.filter((r) => r.status !== 'success').map((r) => `${r.status} ${r.name}: ${r.message ?? ''}`)

describe("a spec's Redis", () => {
  it('redis-server is on PATH (the spec runner starts it)', () => {
    expect(spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout).toMatch(/Redis server v=/)
  })

  it("resty.redis talks to the Redis helpers.redis_port names: replies, pipelines, a pool's reuse", async () => {
    const { results, printed } = await run(`
local helpers = require "spec.helpers"
local redis = require "resty.redis"
local function connect()
  local red = redis:new()
  red:set_timeout(1000)
  assert(red:connect(helpers.redis_host, helpers.redis_port))
  return red
end
describe("resty.redis", function()
  it("answers as lua-resty-redis does", function()
    local red = connect()
    assert.equal("OK", red:flushall())
    assert.equal("OK", red:set("k", "v"))
    assert.equal("v", red:get("k"))
    assert.equal(ngx.null, red:get("missing"))
    assert.equal(3, red:incrby("n", 3))
    assert.equal(4, red:eval("return redis.call('incr', KEYS[1])", 1, "n"))
    local res, err = red:incr("k")
    assert.is_nil(res)
    assert.matches("not an integer", err)
    red:init_pipeline()
    red:set("a", 1)
    red:incr("k")
    red:get("a")
    local out = assert(red:commit_pipeline())
    assert.equal("OK", out[1])
    assert.equal(false, out[2][1])
    assert.equal("1", out[3])
    print(red:info():match("process_id:(%d+)"))
    assert(red:set_keepalive(10000, 10))
  end)
  it("a kept-alive connection is reused, its count told", function()
    local red = connect()
    assert.equal(1, red:get_reused_times())
    red:close()
  end)
  it("a port nothing listens on: nil and nginx's words", function()
    local red = redis:new()
    red:set_timeout(500)
    local ok, err = red:connect("127.0.0.1", 1)
    assert.is_nil(ok)
    assert.equal("connection refused", err)
    ok, err = red:connect("no-such-host.invalid", 6379)
    assert.is_nil(ok)
    assert.equal("no-such-host.invalid could not be resolved (3: Host not found)", err)
  end)
end)`)
    expect(failing(results)).toEqual([])
    expect(results).toHaveLength(3)
    // stopped with the spec file
    const pid = Number(printed[0])
    expect(pid).toBeGreaterThan(0)
    await new Promise((r) => setTimeout(r, 300))
    expect(() => process.kill(pid, 0)).toThrow()
  })
})

describe('resty.shell', () => {
  it('runs a command in the plugin root and answers ok, stdout, stderr, reason, status', async () => {
    const { results } = await run(`
describe("shell", function()
  it("runs", function()
    local shell = require "resty.shell"
    local ok, out, err, reason, status = shell.run("ls spec; echo oops >&2; exit 3")
    assert.is_false(ok)
    assert.equal("x_spec.lua\\n", out)
    assert.equal("oops\\n", err)
    assert.equal("exit", reason)
    assert.equal(3, status)
    assert.is_true((shell.run("true")))
  end)
end)`)
    expect(failing(results)).toEqual([])
    expect(results).toHaveLength(1)
  })
})

describe('the Redis a spec file starts', () => {
  it('is its own even when another Redis took the port first: that one is told apart by its pid', async () => {
    const { SyncSockets } = await import('./sockets.js')
    const { LocalRedis } = await import('./redis-server.js')
    const sockets = new SyncSockets()
    const free = () => Number(sockets.call('free_port', {}, 2_000).port)
    const taken = free()
    const other = spawn('redis-server', ['--port', String(taken), '--bind', '127.0.0.1', '--save', ''], {
      stdio: 'ignore',
    })
    try {
      await new Promise((r) => setTimeout(r, 300))
      const ports = [taken]
      const redis = new LocalRedis(sockets, badgeRoot({}), () => ports.shift() ?? free())
      const address = redis.get()
      redis.stop()
      expect(address.unavailable).toBeUndefined()
      expect(address.port).not.toBe(taken)
    } finally {
      other.kill()
      sockets.close()
    }
  })
})
