import { spawn } from 'node:child_process'
import { BIN, ROOT } from './broker.js'
import { waitFor } from './ports.js'

export interface CliRun {
  stdout(): string
  stderr(): string
  /** Waits until stderr (or stdout) matches, and returns the match. */
  waitFor(pattern: RegExp, stream?: 'stdout' | 'stderr', ms?: number): Promise<RegExpMatchArray>
  /** Writes to the command's stdin. */
  write(text: string): void
  exited: Promise<{ code: number | null; stdout: string; stderr: string }>
  kill(signal?: NodeJS.Signals): void
}

/** Starts `bin/run.js args` in the background, for commands that wait (--capture, test-provider, --step). */
export function spawnCli(
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; command?: string[] } = {},
): CliRun {
  const [cmd, ...pre] = opts.command ?? [process.execPath]
  const proc = spawn(cmd!, [...pre, BIN, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, BROKER_LOG_LEVEL: 'warn', ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  proc.stdout.on('data', (d) => (out += d))
  proc.stderr.on('data', (d) => (err += d))
  const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000)
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    proc.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout: out, stderr: err })
    }),
  )
  return {
    stdout: () => out,
    stderr: () => err,
    waitFor: (pattern, stream = 'stderr', ms = 20_000) =>
      waitFor(
        async () => {
          if (proc.exitCode !== null) throw new Error(`exited ${proc.exitCode}: ${err}`)
          return (stream === 'stderr' ? err : out).match(pattern) ?? undefined
        },
        ms,
        `${pattern} in ${stream}; got stdout=${out} stderr=${err}`,
      ),
    write: (text) => proc.stdin.write(text),
    exited,
    kill: (signal = 'SIGTERM') => proc.kill(signal),
  }
}
