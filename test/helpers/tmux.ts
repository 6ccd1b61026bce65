import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { BIN, ROOT } from './broker.js'
import { waitFor } from './ports.js'

export interface Terminal {
  /** Keys as tmux send-keys takes them: text, or names such as Enter, BSpace. */
  send(...keys: string[]): void
  /** Types text literally. */
  type(text: string): void
  /** What the terminal shows now. */
  screen(): string
  /** The same with its colours and attributes, as escape sequences. */
  styledScreen(): string
  waitFor(pattern: RegExp, ms?: number): Promise<string>
  /** The command's exit code, once it has ended. */
  exitCode(ms?: number): Promise<number>
  stop(): void
}

/** Runs `bin/run.js args` in a real terminal: a detached tmux session (200×50 unless `size` says) on a socket of its own. */
export function runInTerminal(
  args: string[],
  env: Record<string, string> = {},
  size: { columns: number; rows: number } = { columns: 200, rows: 50 },
): Terminal {
  const socket = `broker-test-${process.pid}-${randomBytes(4).toString('hex')}`
  const tmux = (...a: string[]) => execFileSync('tmux', ['-L', socket, ...a], { encoding: 'utf8' })
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
  const command = `cd ${quote(ROOT)} && ${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(' ')}; echo "EXIT=$?"; sleep 600`
  const envArgs = Object.entries({ BROKER_LOG_LEVEL: 'warn', ...env }).flatMap(([k, v]) => ['-e', `${k}=${v}`])
  tmux('new-session', '-d', '-x', String(size.columns), '-y', String(size.rows), ...envArgs, 'sh', '-c', command)
  const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-200')
  return {
    send: (...keys) => void tmux('send-keys', ...keys),
    type: (text) => void tmux('send-keys', '-l', text),
    screen,
    styledScreen: () => tmux('capture-pane', '-p', '-e', '-J', '-S', '-200'),
    waitFor: (pattern, ms = 15_000) =>
      waitFor(async () => (pattern.test(screen()) ? screen() : undefined), ms, `${pattern} on the terminal`).catch(
        (err: Error) => {
          throw new Error(`${err.message}\n--- screen ---\n${screen()}`)
        },
      ),
    exitCode: async (ms = 20_000) =>
      Number(await waitFor(async () => screen().match(/EXIT=(\d+)/)?.[1], ms, 'the command to end')),
    stop: () => {
      try {
        tmux('kill-server')
      } catch {
        // already gone
      }
    },
  }
}
