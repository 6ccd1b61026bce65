/**
 * A plugin server process as Kong runs one (`plugin_servers/process.lua`): started with its
 * plugins directory and socket in a temp dir, stdout and stderr joined and kept as log lines.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, extname, join } from 'node:path'
import { RpcConnection } from './rpc.js'

const require = createRequire(import.meta.url)

/**
 * Loaded into the server before it starts: it exits once its parent is gone. A `pdk run` or `pdk test`
 * killed outright (SIGKILL, an out-of-memory kill) cannot stop its plugin server, which would otherwise
 * stay, orphaned, listening on a socket in a temp dir. The parent's pid changes when it dies (the
 * server is handed to init or a subreaper); checked twice a second, not holding the server open.
 */
const ORPHAN_WATCH = `data:text/javascript,${encodeURIComponent(
  'const parent = process.ppid; setInterval(() => { if (process.ppid !== parent) process.exit(0) }, 500).unref()',
)}`

/** The real kong-js-pluginserver of the kong-pdk package, run by this Node, stopping when its parent is gone. */
export function defaultCommand(): string[] {
  return [
    process.execPath,
    `--import=${ORPHAN_WATCH}`,
    join(dirname(require.resolve('kong-pdk/package.json')), 'bin', 'kong-js-pluginserver'),
  ]
}

const JS = new Set(['.js', '.cjs', '.mjs', '.ts', '.cts', '.mts'])
const SOCK = 'js_pluginserver.sock'
// node-color-log redraws a line with cursor moves and colours; only the text is kept
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g

const STAMP = /^\d{4}-\d\d-\d\dT[\d:.]+Z\s+/
const PARTIAL = /^\s*(\d{4}-\d\d-\d\dT[\d:.]+Z)?(\s+\[[A-Z]+\])?\s*$/

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`

/** Why a server could not start, with what it printed. */
export class StartError extends Error {}

/** A plugin to place in the server's plugins directory. */
export interface PluginFile {
  /** The module file to serve. */
  module: string
  /** The file name (without extension) it is placed under: the server names a plugin by it unless it exports Name. */
  fileName: string
}

/** A module plugin to serve: its file, the file name it gets in the plugins directory, its registered name. */
export interface ServedPlugin extends PluginFile {
  name: string
}

export interface StartOptions {
  plugins: readonly PluginFile[]
  /** A shell command line instead of the kong-js-pluginserver; {prefix} {sock_name} {socket} {plugins} are filled in. */
  command?: string
  timeoutMs: number
}

/** One running server: its socket, its log, and a connection to it. */
export class ServerProcess {
  readonly log: string[] = []
  onLine: ((line: string) => void) | undefined
  private partial = ''
  private conn: RpcConnection | undefined
  exited: string | undefined

  private constructor(
    readonly dir: string,
    readonly socket: string,
    private readonly child: ChildProcess,
    /** A command line run by a shell, in a process group of its own: stopping it stops the group. */
    private readonly group = false,
  ) {
    const take = (chunk: Buffer) => this.take(chunk.toString('utf8'))
    child.stdout?.on('data', take)
    child.stderr?.on('data', take)
    child.on('exit', (code, signal) => {
      this.exited = signal ? `killed by ${signal}` : `exited with status ${code}`
    })
  }

  get pid(): number {
    return this.child.pid ?? 0
  }

  /** Starts the server and waits until its socket answers. */
  static async start(o: StartOptions): Promise<ServerProcess> {
    const dir = mkdtempSync(join(tmpdir(), 'broker-ps-'))
    const plugins = join(dir, 'plugins')
    mkdirSync(plugins)
    for (const p of o.plugins) {
      const ext = extname(p.module)
      // a file named after the plugin, so the server registers it under that name (or its Name)
      if (JS.has(ext))
        writeFileSync(join(plugins, `${p.fileName}.js`), `module.exports = require(${JSON.stringify(p.module)})\n`)
      else symlinkSync(p.module, join(plugins, p.fileName + ext))
    }
    const socket = join(dir, SOCK)
    const fill: Record<string, string> = { prefix: dir, sock_name: SOCK, socket, plugins }
    let child: ChildProcess
    // TypeScript plugins compile on their own (ts-node in the server), not with this project's tsconfig
    const env = {
      ...process.env,
      TS_NODE_TRANSPILE_ONLY: 'true',
      TS_NODE_SKIP_PROJECT: 'true',
      TS_NODE_COMPILER_OPTIONS: '{"target":"es2022","module":"commonjs"}',
    }
    if (o.command === undefined) {
      const [cmd, ...args] = defaultCommand()
      child = spawn(cmd!, [...args, '-p', dir, '--sock-name', SOCK, '-d', plugins], { env, cwd: dir })
    } else {
      const line = /\{(prefix|sock_name|socket|plugins)\}/.test(o.command)
        ? o.command.replace(/\{(prefix|sock_name|socket|plugins)\}/g, (_, k: string) => quote(fill[k]!))
        : `${o.command} -p ${quote(dir)} --sock-name ${SOCK} -d ${quote(plugins)}`
      // The shell may run the server as its child rather than become it: stopping the shell alone left
      // that child running. Its own process group is stopped whole (stop()).
      child = spawn(line, { shell: true, env, cwd: dir, detached: true })
    }
    const server = new ServerProcess(dir, socket, child, o.command !== undefined)
    const spawnError = new Promise<never>((_, reject) =>
      child.once('error', (e) => reject(new StartError(`cannot run the plugin server: ${e.message}`))),
    )
    try {
      await Promise.race([server.waitReady(o.timeoutMs), spawnError])
    } catch (e) {
      server.stop()
      throw e
    }
    return server
  }

  private async waitReady(timeoutMs: number): Promise<void> {
    const end = Date.now() + timeoutMs
    for (;;) {
      if (this.exited) throw new StartError(`the plugin server ${this.exited} before listening${this.tail()}`)
      if (existsSync(this.socket)) {
        try {
          this.conn = await RpcConnection.open(this.socket, Math.max(100, end - Date.now()))
          return
        } catch {
          // listening is not done yet
        }
      }
      if (Date.now() > end)
        throw new StartError(`the plugin server did not listen within ${timeoutMs} ms${this.tail()}`)
      await new Promise((r) => setTimeout(r, 25))
    }
  }

  /** The last lines the server printed, for error messages. */
  tail(): string {
    // the server's words without stack frames or this temp dir
    const lines = this.log
      .filter((l) => !/^\s*at /.test(l))
      .slice(-4)
      .map((l) => l.split(this.dir).join('<server dir>'))
    return lines.length ? `; it printed: ${lines.join(' | ')}` : ''
  }

  private take(text: string): void {
    const lines = (this.partial + text.replace(ANSI, '')).split('\n')
    this.partial = lines.pop()!
    for (const raw of lines) {
      // node-color-log draws a line in steps (time, then level, then text): only the last step is kept
      if (PARTIAL.test(raw)) continue
      const line = raw.replace(STAMP, '').trimEnd()
      this.log.push(line)
      this.onLine?.(line)
    }
  }

  /** The connection, opened again if it was lost. */
  async connection(timeoutMs: number): Promise<RpcConnection> {
    if (this.conn?.alive) return this.conn
    this.conn = await RpcConnection.open(this.socket, timeoutMs)
    return this.conn
  }

  stop(): void {
    this.conn?.close()
    if (this.group && this.child.pid) {
      try {
        process.kill(-this.child.pid, 'SIGTERM')
      } catch {
        // the group is gone already
      }
    } else if (!this.exited) this.child.kill('SIGTERM')
    this.child.stdout?.destroy()
    this.child.stderr?.destroy()
    this.child.unref()
    rmSync(this.dir, { recursive: true, force: true })
  }
}
