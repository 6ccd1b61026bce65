import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from './helpers/broker.js'
import { freePort, waitFor } from './helpers/ports.js'

// The package as a user gets it: `npm pack` (prepack builds), then `npm install -g` of the tarball
// into a temp prefix (dependencies from the npm registry), and the installed `broker` run from
// outside the checkout. Nothing here reads the checkout after packing. The package is published
// as oauth-broker (`broker` on npm is someone else's); the command it installs is still `broker`.

const dir = mkdtempSync(join(tmpdir(), 'broker-pack-'))
const prefix = join(dir, 'prefix')
const installed = join(prefix, 'lib', 'node_modules', 'oauth-broker')
const broker = join(prefix, 'bin', 'broker')
const work = mkdtempSync(join(tmpdir(), 'broker-pack-cwd-'))
// Children must not find the checkout's modules or be told they run under a test.
const env = { PATH: `${prefix}/bin:${process.env.PATH}`, HOME: process.env.HOME ?? work, BROKER_LOG_LEVEL: 'warn' }

let installLog = ''

const run = (args: string[], timeout = 30_000) => spawnSync(broker, args, { cwd: work, env, encoding: 'utf8', timeout })

beforeAll(() => {
  const npm = (args: string[], cwd: string) =>
    execFileSync('npm', args, {
      cwd,
      encoding: 'utf8',
      timeout: 300_000,
      env: { ...process.env, npm_config_update_notifier: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  // Packed from a copy of the checkout's files without dist/, as a fresh clone is: prepack must
  // build, and the build never rewrites the dist/ that other tests are running meanwhile.
  const clone = join(dir, 'clone')
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
  // A worktree's node_modules may be a symbolic link (untracked, so listed here): linked below instead.
  for (const f of files.split('\0').filter((f) => f && f !== 'node_modules'))
    if (existsSync(join(ROOT, f))) cpSync(join(ROOT, f), join(clone, f), { recursive: true })
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir')
  npm(['pack', '--silent', '--pack-destination', dir], clone)
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))
  if (!tarball) throw new Error('npm pack made no tarball')
  expect(tarball).toMatch(/^oauth-broker-\d+\.\d+\.\d+\.tgz$/)
  // stderr too: npm prints EBADENGINE as a warning and still exits 0.
  const install = spawnSync(
    'npm',
    ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', join(dir, tarball)],
    { cwd: work, encoding: 'utf8', timeout: 300_000, env: { ...process.env, npm_config_update_notifier: 'false' } },
  )
  installLog = `${install.stdout}${install.stderr}`
  if (install.status !== 0) throw new Error(`npm install -g failed:\n${installLog}`)
}, 600_000)

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
  rmSync(work, { recursive: true, force: true })
})

describe('the packed package, installed globally', () => {
  it('ships what a run needs and nothing for development', () => {
    for (const f of ['oclif.manifest.json', 'LICENSE', 'pdk/fixture/fixture.schema.json', 'dist/commands/serve.js'])
      expect(existsSync(join(installed, f)), f).toBe(true)
    for (const f of ['bin/dev.js', 'commands', 'src', 'test', 'tsconfig.json', 'fixtures/flows'])
      expect(existsSync(join(installed, f)), f).toBe(false)
    const files = execFileSync('find', [join(installed, 'dist'), '-name', '*.test.js'], { encoding: 'utf8' })
    expect(files.trim()).toBe('')
  })

  // `overrides` apply to this checkout only: an installed copy resolves its own tree, which must
  // neither need a newer Node (light-my-request 6.8 → cookie 2 needs 22) nor read as invalid.
  it('gets a dependency tree with no engine warning and nothing invalid (npm ls --all)', () => {
    expect(installLog).not.toMatch(/EBADENGINE|Unsupported engine/)
    // Dev dependencies are never installed for a user: --omit=dev keeps them from reading as missing.
    const ls = spawnSync('npm', ['ls', '--all', '--omit=dev'], { cwd: installed, encoding: 'utf8', timeout: 60_000 })
    const tree = `${ls.stdout}${ls.stderr}`
    // Another platform's prebuilt binaries (UNMET OPTIONAL DEPENDENCY) are as they should be.
    expect(tree.replace(/UNMET OPTIONAL DEPENDENCY/g, '')).not.toMatch(/invalid|UNMET|missing|EBADENGINE|ERR/)
    expect(ls.status, tree).toBe(0)
  })

  it('npm pack on a fresh clone without npm ci says what to run', () => {
    const fresh = join(dir, 'fresh')
    for (const f of ['package.json', 'package-lock.json', 'scripts/pack.js']) cpSync(join(ROOT, f), join(fresh, f))
    const r = spawnSync('npm', ['pack', '--pack-destination', fresh], { cwd: fresh, encoding: 'utf8', timeout: 60_000 })
    expect(r.stderr).toContain('run `npm ci`, then `npm pack` again')
    expect(r.stderr).not.toMatch(/tsc: not found|Cannot find package 'esbuild'/)
    expect(r.status).not.toBe(0)
  })

  it('broker --version', () => {
    const r = run(['--version'])
    expect(r.stderr).toBe('')
    expect(r.stdout).toMatch(/^oauth-broker\/\d+\.\d+\.\d+ \S+ node-v\d+/)
    expect(r.status).toBe(0)
  })

  it('broker pdk run of a shipped fixture', () => {
    const r = run(['pdk', 'run', join(installed, 'fixtures', 'pdk', 'js-hello.json')])
    expect(r.stderr).not.toMatch(/Error/)
    expect(r.stdout).toMatch(/1 passed, 0 failed/)
    expect(r.status).toBe(0)
  })

  it("runs the README's example and a shipped fixture by name, outside any checkout", () => {
    for (const args of [['fixtures/pdk/js-hello.json'], ['js-hello']]) {
      const r = run(['pdk', 'run', ...args])
      expect(r.stderr, args.join(' ')).toBe('')
      expect(r.stdout).toMatch(/1 passed, 0 failed/)
      expect(r.status).toBe(0)
    }
    const miss = run(['pdk', 'run', 'js-helo'])
    expect(miss.stderr).toContain(`(${join(installed, 'fixtures', 'pdk')}). Did you mean js-hello?`)
    expect(miss.status).toBe(2)
  })

  it('broker pdk schema names the schema inside the installed copy, and a fixture pointing there runs', () => {
    const r = run(['pdk', 'schema'])
    expect(r.stderr).toBe('')
    expect(r.stdout).toBe(`${join(installed, 'pdk', 'fixture', 'fixture.schema.json')}\n`)
    const fixture = JSON.parse(readFileSync(join(installed, 'fixtures', 'pdk', 'js-hello.json'), 'utf8')) as object
    const file = join(installed, 'fixtures', 'pdk', 'schema-elsewhere.json')
    writeFileSync(file, JSON.stringify({ ...fixture, $schema: pathToFileURL(r.stdout.trim()).href }))
    const ran = run(['pdk', 'run', file])
    expect(ran.stdout).toMatch(/1 passed, 0 failed/)
  })

  it('broker serve answers /ping', async () => {
    const port = await freePort()
    const proc = spawn(broker, ['serve', '--port', String(port), '--store', 'memory'], { cwd: work, env })
    let err = ''
    proc.stderr.on('data', (d) => (err += d))
    try {
      const res = await waitFor(
        async () => proc.exitCode === null && (await fetch(`http://127.0.0.1:${port}/ping`)),
        20_000,
        'broker serve',
      ).catch((e: Error) => {
        throw new Error(`${e.message}\n${err}`)
      })
      expect(await res.json()).toEqual({ ping: 'pong' })
    } finally {
      proc.kill('SIGTERM')
    }
  })

  it('broker dashboard starts in an 80×24 terminal; its PDK panel lists the shipped fixtures, naming the folder', async () => {
    const socket = `broker-pack-${randomBytes(4).toString('hex')}`
    const tmux = (...a: string[]) => execFileSync('tmux', ['-L', socket, ...a], { encoding: 'utf8' })
    const port = await freePort()
    const exports = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`])
    tmux(
      'new-session',
      '-d',
      '-x',
      '80',
      '-y',
      '24',
      '-c',
      work,
      ...exports,
      ...[broker, 'dashboard'],
      ...['--port', String(port), '--store', 'memory'],
    )
    try {
      const screen = await waitFor(
        async () => {
          const text = tmux('capture-pane', '-p')
          return /1 Flows/.test(text) && /\bq\b.*quit/.test(text) ? text : undefined
        },
        20_000,
        'the dashboard',
      ).catch((e: Error) => {
        throw new Error(`${e.message}\n${tmux('capture-pane', '-p')}`)
      })
      expect(screen).not.toMatch(/Error/)
      // Run outside any checkout: no fixtures/pdk here, so the panel shows the package's own.
      tmux('send-keys', '4')
      const panel = await waitFor(
        async () => {
          const flat = tmux('capture-pane', '-p').replace(/\s+/g, '')
          return /Fixturesin\S*oauth-broker\/fixtures\/pdk\((\d+)\)/.exec(flat) ?? undefined
        },
        10_000,
        'the PDK panel',
      ).catch((e: Error) => {
        throw new Error(`${e.message}\n${tmux('capture-pane', '-p')}`)
      })
      expect(Number(panel[1])).toBeGreaterThan(0)
      tmux('send-keys', 'q')
    } finally {
      try {
        tmux('kill-server')
      } catch {
        // already gone with the dashboard
      }
    }
  })
})
