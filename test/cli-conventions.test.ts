import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BIN, runCli, startBroker } from './helpers/broker.js'
import { waitFor } from './helpers/ports.js'

// oclif's conventions as a user meets them: help, -h, version, commands, completion, typos.

describe('help and version', () => {
  it('broker help lists the commands and topics; broker help store is the command help', async () => {
    const all = await runCli(['help'])
    expect(all.code).toBe(0)
    for (const id of ['serve', 'store', 'hash-check', 'walk', 'test-provider', 'dashboard', 'pdk', 'secrets'])
      expect(all.stdout).toMatch(new RegExp(`^\\s+${id}\\s`, 'm'))
    const store = await runCli(['help', 'store'])
    expect(store.code).toBe(0)
    expect(store.stdout).toMatch(/^USAGE\n\s+\$ broker store/m)
  })

  it('-h is help for every command but test-provider, where it is the host', async () => {
    const root = await runCli(['-h'])
    expect(root.code).toBe(0)
    expect(root.stdout).toMatch(/^COMMANDS$/m)
    const walk = await runCli(['walk', '-h'])
    expect(walk.code).toBe(0)
    expect(walk.stdout).toMatch(/\$ broker walk URL/)
    const pdk = await runCli(['pdk', 'run', '-h'])
    expect(pdk.code).toBe(0)
    expect(pdk.stdout).toMatch(/\$ broker pdk run/)
    const tp = await runCli(['test-provider', '-h'])
    expect(tp.stdout).toBe('')
    expect(tp.stderr).toBe('Error USAGE: Flag --host expects a value; see --help.\n')
    expect(tp.code).toBe(2)
  })

  it('broker version and --version print the same line; version --json has its parts', async () => {
    const [a, b, c] = await Promise.all([runCli(['version']), runCli(['--version']), runCli(['version', '--json'])])
    expect(a.stdout).toMatch(/^oauth-broker\/\d+\.\d+\.\d+ \S+ node-v/)
    expect(b.stdout).toBe(a.stdout)
    expect(JSON.parse(c.stdout)).toMatchObject({ version: expect.any(String), node_version: process.version })
  })

  it('broker commands and broker autocomplete answer', async () => {
    const [commands, completion] = await Promise.all([
      // Spawned: the plugins' commands as an installed broker runs them (autocomplete leaves a warning behind).
      runCli(['commands', '--json'], { spawn: true }),
      runCli(['autocomplete', 'bash'], {
        env: { XDG_CACHE_HOME: mkdtempSync(join(tmpdir(), 'broker-ac-')) },
        spawn: true,
      }),
    ])
    expect(commands.code).toBe(0)
    const ids = (JSON.parse(commands.stdout) as Array<{ id: string }>).map((c) => c.id)
    expect(ids).toEqual(expect.arrayContaining(['serve', 'pdk:run', 'secrets:list', 'version']))
    expect(completion.code, completion.stderr).toBe(0)
    expect(completion.stdout).toMatch(/broker autocomplete/)
  })
})

describe('typos', () => {
  it('suggest the closest command in our error format', async () => {
    const r = await runCli(['stroe'])
    expect(r.stderr).toBe(
      'Error NOT_FOUND: "stroe" is not a broker command. Did you mean `broker store`? `broker help` lists every command.\n',
    )
    expect(r.code).toBe(1)
  })

  it("name the words typed, never oclif's colon id with the arguments", async () => {
    const r = await runCli(['hash-chek', 'abc'])
    expect(r.stderr).toMatch(
      /^Error NOT_FOUND: "hash-chek" is not a broker command\. Did you mean `broker hash-check`\?/,
    )
    expect(r.stderr).not.toContain(':abc')
    const topic = await runCli(['pdk', 'rn', 'x.json'])
    expect(topic.stderr).toMatch(/"pdk rn" is not a broker command\. Did you mean `broker pdk run`\?/)
  })

  it("in a flag: the command's closest flag, --no- forms and --json included", async () => {
    const r = await runCli(['store', '--flwo', 'oauth2-3'])
    expect(r.stderr).toBe('Error USAGE: Nonexistent flag: --flwo (did you mean --flow?); see --help.\n')
    expect(r.code).toBe(2)
    const no = await runCli(['serve', '--no-api-opne'])
    expect(no.stderr).toMatch(/\(did you mean --no-api-open\?\)/)
  })

  it('in broker help <command> as well', async () => {
    const r = await runCli(['help', 'stroe'])
    expect(r.stderr).toMatch(/^Error NOT_FOUND: "stroe" is not a broker command\. Did you mean `broker store`\?/)
    expect(r.code).toBe(1)
  })

  it('answer JSON under --json, without a suggestion when nothing is close', async () => {
    const r = await runCli(['zzzzzz', '--json'])
    expect(JSON.parse(r.stdout)).toEqual({
      error: { code: 'NOT_FOUND', message: '"zzzzzz" is not a broker command. `broker help` lists every command.' },
    })
  })
})

describe('a flag that takes one of a fixed list, given without a value', () => {
  it.each([
    ['store', '--delivery', 'query, form_post, code'],
    ['store', '--client-auth', 'client_secret_post, post,'],
    ['store', '--body-format', 'form, json'],
    ['store', '--signature-method', 'HMAC-SHA1,'],
    ['serve', '--store', 'auto, redis, memory'],
    ['serve', '--log-level', 'fatal, error,'],
    ['dashboard', '--store', 'auto, redis, memory'],
  ])('broker %s %s is a usage error (exit 2) naming the values', async (command, flag, values) => {
    const r = await runCli([command, flag])
    expect(r.stderr).toMatch(new RegExp(`^Error USAGE: Flag ${flag} expects one of these values: ${values}`))
    expect(r.code).toBe(2)
  })
})

describe('hints name the CLI command to run', { timeout: 60_000 }, () => {
  it('serve -c with a missing file says to check the -c path', async () => {
    const r = await runCli(['serve', '-c', 'nofile.js'], { cwd: mkdtempSync(join(tmpdir(), 'broker-c-')) })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/→ Check the path given to -c\/--config/)
    expect(r.stderr).not.toMatch(/Fix the configuration key/)
  })

  it('pdk run of a missing file says to check the path, not to fix a field', async () => {
    const r = await runCli(['pdk', 'run', 'nope.json'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/→ Check the path: `broker pdk run <file or folder>`/)
    expect(r.stderr).not.toMatch(/docs\/pdk\.md|Fix the field/)
  })

  it('serve on a busy port is a usage error suggesting --port', async () => {
    const first = await startBroker({ args: ['--store', 'memory'], cwd: mkdtempSync(join(tmpdir(), 'broker-p1-')) })
    try {
      const r = await runCli(['serve', '--port', String(first.port), '--store', 'memory'], {
        cwd: mkdtempSync(join(tmpdir(), 'broker-p2-')),
      })
      // First thing: no notice about the store or the secrets before it.
      expect(r.stderr.split('\n')[0]).toBe(`Error USAGE: Port ${first.port} is in use; pick another with --port.`)
      expect(r.code).toBe(2)
    } finally {
      await first.stop()
    }
  })
})

describe('serve pid files', { timeout: 60_000 }, () => {
  it("--pid-dir without the slash is the directory; a second broker there keeps the first one's file", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'broker-piddir-'))
    const first = await startBroker({ args: ['--store', 'memory', '--pid-dir', dir] })
    try {
      const pidFile = join(dir, '.broker.pid')
      expect(readFileSync(pidFile, 'utf8').trim()).toBe(String(first.proc.pid))
      const second = await startBroker({ args: ['--store', 'memory', '--pid-dir', dir] })
      try {
        expect(readFileSync(pidFile, 'utf8').trim()).toBe(String(first.proc.pid))
        const own = join(dir, `.broker.${second.port}.pid`)
        expect(readFileSync(own, 'utf8').trim()).toBe(String(second.proc.pid))
        expect(second.stderr()).toContain(`this one's pid file is ${own}`)
      } finally {
        expect(await second.stop()).toBe(0)
      }
      expect(readFileSync(pidFile, 'utf8').trim()).toBe(String(first.proc.pid))
    } finally {
      await first.stop()
    }
    expect(existsSync(join(dir, '.broker.pid'))).toBe(false)
  })
})

describe('--json', { timeout: 60_000 }, () => {
  it('serve --json answers in snake_case, like the HTTP API', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'broker-json-'))
    const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--store', 'memory', '--json'], {
      cwd,
      env: { ...process.env, BROKER_LOG_LEVEL: 'warn', BROKER_WORKERS: '1' },
    })
    let out = ''
    let err = ''
    proc.stdout.on('data', (d) => (out += d))
    proc.stderr.on('data', (d) => (err += d))
    const exited = new Promise<number | null>((r) => proc.once('exit', r))
    await waitFor(async () => /listening on port/.test(err), 30_000, 'serve to listen')
    proc.kill('SIGTERM')
    expect(await exited).toBe(0)
    const answer = JSON.parse(out) as Record<string, unknown>
    expect(answer).toMatchObject({ pid_file: join(cwd, '.broker.pid'), stopped_by: 'SIGTERM' })
    for (const key of Object.keys(answer)) expect(key).toMatch(/^[a-z0-9_]+$/)
  })
})

describe('hash-check --watch', { timeout: 60_000 }, () => {
  it('exits 1 when the flow expires unfinished', async () => {
    const broker = await startBroker({
      args: ['--store', 'memory', '--expire', '6'],
      cwd: mkdtempSync(join(tmpdir(), 'broker-w-')),
    })
    try {
      const res = await fetch(`${broker.url}/store`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          auth_version: '2',
          auth_leg: '3',
          client_id: 'watcher',
          authorize_url: 'http://127.0.0.1:9/authorize',
          access_url: 'http://127.0.0.1:9/token',
        }),
      })
      const { hash } = (await res.json()) as { hash: string }
      const r = await runCli(['hash-check', '--watch', '--broker', broker.url, '--', hash])
      expect(r.stderr).toContain('The flow expired before it finished.')
      expect(r.code).toBe(1)
    } finally {
      await broker.stop()
    }
  })
})
