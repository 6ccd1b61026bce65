import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli, startBroker } from './helpers/broker.js'
import { waitFor } from './helpers/ports.js'
import { startRedis } from './helpers/redis.js'

// serve's process hygiene (issue 27): what a worker's environment holds, the pid file, draining, restarts.

const workerPids = (primary: number): number[] =>
  execFileSync('ps', ['-o', 'pid=', '--ppid', String(primary)], { encoding: 'utf8' })
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter(Boolean)

const SECRETS = {
  session: 'session-secret-from-the-config-file',
  admin: 'admin-key-from-the-config-file-0001',
  api: 'api-key-from-the-config-file-00001',
  env: 'store-pass-given-in-the-environment',
}

/**
 * A folder with a module hook (register.mjs, for NODE_OPTIONS=--import, so every process of the broker has
 * it) that writes each module a process loads to <pid>.txt there.
 */
function moduleLog(): string {
  const dir = mkdtempSync(join(tmpdir(), 'broker-loaded-'))
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs'
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(dir)} + '/' + process.pid + '.txt', url + '\\n')
  return next(url, context)
}`,
  )
  // The hook sees what ESM imports (CommonJS included); what CommonJS requires from CommonJS (fastify's
  // own dependencies) is compiled without it, so Module#_compile names those.
  writeFileSync(
    join(dir, 'register.mjs'),
    `import Module, { register } from 'node:module'
import { appendFileSync } from 'node:fs'
register(${JSON.stringify(`file://${dir}/hooks.mjs`)})
const compile = Module.prototype._compile
Module.prototype._compile = function (content, filename) {
  appendFileSync(${JSON.stringify(dir)} + '/' + process.pid + '.txt', 'file://' + filename + '\\n')
  return compile.call(this, content, filename)
}
`,
  )
  return dir
}

describe('serve', () => {
  it("hands a worker its configuration over IPC: no secret in the worker's /proc/<pid>/environ", async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'broker-environ-'))
    writeFileSync(
      join(cwd, 'broker.json'),
      JSON.stringify({
        session: { secret: SECRETS.session },
        admin: { key: SECRETS.admin },
        api: { keys: [SECRETS.api] },
      }),
    )
    const broker = await startBroker({
      cwd,
      args: ['-c', 'broker.json', '--store', 'memory'],
      env: { BROKER_STORE_PASS: SECRETS.env },
    })
    try {
      const [pid] = await waitFor(async () => {
        const pids = workerPids(broker.proc.pid!)
        return pids.length ? pids : undefined
      })
      const environ = readFileSync(`/proc/${pid}/environ`, 'latin1')
      expect(environ).toContain('BROKER_LOG_LEVEL=')
      for (const secret of Object.values(SECRETS)) expect(environ).not.toContain(secret)
      expect(environ).not.toContain('BROKER_WORKER_SETUP')
    } finally {
      await broker.stop()
    }
  })

  it('runs a primary that loads none of the CLI, the config schema, the logger or the Redis client', async () => {
    const dir = moduleLog()
    const broker = await startBroker({
      args: ['--store', 'memory'],
      env: { NODE_OPTIONS: `--import=${join(dir, 'register.mjs')}` },
    })
    try {
      const loaded = readFileSync(join(dir, `${broker.proc.pid}.txt`), 'utf8')
      expect(loaded).toContain('/dist/src/services/serve/primary.js')
      for (const heavy of ['@oclif/core', 'zod', 'pino', 'ioredis', 'ioredis-mock', 'fastify'])
        expect(loaded).not.toContain(`/node_modules/${heavy}/`)
      // The config was resolved by the CLI, in another process, and the workers serve.
      const [worker] = workerPids(broker.proc.pid!)
      expect(readFileSync(join(dir, `${worker}.txt`), 'utf8')).toContain('/node_modules/fastify/')
    } finally {
      await broker.stop()
    }
  })

  it('runs workers on Redis that load no CLI, config schema, UI, Lua VM, PDK, embedded store, JSON schema compiler or unused flow', async () => {
    const dir = moduleLog()
    const redis = await startRedis()
    const broker = await startBroker({
      args: ['--store', 'redis', '--store-port', String(redis.port)],
      env: { NODE_OPTIONS: `--import=${join(dir, 'register.mjs')}` },
    })
    try {
      const [worker] = workerPids(broker.proc.pid!)
      const loaded = readFileSync(join(dir, `${worker}.txt`), 'utf8')
      expect(loaded).toContain('/node_modules/ioredis/')
      // A flow plugin (and what only some flows use: jose, OAuth 1.0a signing) loads with the first request naming it.
      // No JSON schema is compiled (src/broker/http/fields.ts): Fastify loads neither Ajv nor fast-json-stringify.
      const unneededModules = ['@oclif/core', 'zod', 'ink', 'react', 'wasmoon', 'ioredis-mock', 'jose', 'oauth-1.0a']
      // No rate limit is set: its plugin is not loaded (security.ts installRateLimits).
      unneededModules.push('@fastify/rate-limit')
      for (const unneeded of [...unneededModules, 'ajv']) expect(loaded).not.toContain(`/node_modules/${unneeded}/`)
      // Fastify's error answers use fast-json-stringify's small runtime (lib/serializer.js), not its compiler.
      expect(loaded).not.toContain('/node_modules/fast-json-stringify/index.js')
      expect(loaded).not.toContain('/dist/pdk/')
      expect(loaded).not.toContain('/dist/flows/oauth_')
      // Large blocks freed go back to the system (primary.ts workerEnv, docs/decisions/0012).
      expect(readFileSync(`/proc/${worker}/environ`, 'utf8').split('\0')).toContain('MALLOC_MMAP_THRESHOLD_=32768')
    } finally {
      await broker.stop()
      await redis.stop()
    }
  })

  it('refuses a symlink planted as its pid file, exit 2, and leaves the target alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-pidlink-'))
    writeFileSync(join(dir, 'precious'), 'keep me\n')
    symlinkSync(join(dir, 'precious'), join(dir, '.broker.pid'))
    const r = await runCli(['serve', '--port', '0', '--store', 'memory', '--pid-dir', dir])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('Error CONFIG_INVALID')
    expect(r.stderr).toContain('symbolic link')
    expect(readFileSync(join(dir, 'precious'), 'utf8')).toBe('keep me\n')
  })

  it('on SIGTERM answers /ping 503 at once and keeps serving for server.drainDelay, then exits 0', async () => {
    const broker = await startBroker({ args: ['--store', 'memory'], env: { BROKER_SERVER_DRAINDELAY: '2000' } })
    const exit = broker.stop('SIGTERM')
    // The worker has the word once /ping says so; until the delay ends, new connections are still served.
    await waitFor(async () => (await fetch(`${broker.url}/ping`)).status === 503, 1500, '/ping 503')
    const stored = await fetch(`${broker.url}/store`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ auth_version: '2', auth_leg: '2', client_id: 'c', access_url: 'http://127.0.0.1:1/t' }),
    })
    expect(stored.status).toBe(200)
    expect(await exit).toBe(0)
  })

  it('on Ctrl-C says it drains and for how long; a second Ctrl-C stops at once', async () => {
    const broker = await startBroker({ args: ['--store', 'memory', '--drain-delay', '600000'] })
    broker.proc.kill('SIGINT')
    await waitFor(async () => /draining/.test(broker.stderr()), 5000, 'the drain notice')
    expect(broker.stderr()).toContain(
      'SIGINT: draining for 600 s (server.drainDelay): /ping answers 503 meanwhile, then requests in flight finish. Ctrl-C again stops at once.',
    )
    // Without the second Ctrl-C it would serve on for ten minutes, past this test's timeout.
    expect(await broker.stop('SIGINT')).toBe(0)
    expect(broker.stderr()).toMatch(/stopping at once/)
  })

  it('replaces the embedded store worker at once after its first crash', async () => {
    const broker = await startBroker({ args: ['--store', 'memory'] })
    try {
      const [pid] = workerPids(broker.proc.pid!)
      process.kill(pid!, 'SIGKILL')
      await waitFor(async () => broker.stderr().includes(`worker ${pid} exited (SIGKILL)`), 5000, 'the restart notice')
      expect(broker.stderr()).toContain(`worker ${pid} exited (SIGKILL); starting a new one in 0 ms`)
      await waitFor(async () => (await fetch(`${broker.url}/ping`)).ok, 10_000, 'the new worker')
    } finally {
      await broker.stop()
    }
  })
})

describe('serve beside another instance on the same Redis', () => {
  it('refuses to start with a generated session.secret while another instance uses the Redis and prefix', async () => {
    const redis = await startRedis()
    const on = ['--store', 'redis', '--store-port', String(redis.port)]
    const first = await startBroker({ args: on })
    try {
      const second = await runCli(['serve', '--port', '0', ...on], { timeoutMs: 20_000 })
      expect(second.code).toBe(2)
      expect(second.stderr).toContain('Error CONFIG_INVALID: Another broker instance uses this Redis')
      expect(second.stderr).toContain('BROKER_SESSION_SECRET')
      // Its own prefix shares nothing with the first: it starts.
      const apart = await startBroker({ args: [...on, '--store-prefix', 'apart:'] })
      await apart.stop()
    } finally {
      await first.stop()
      await redis.stop()
    }
  })
})
