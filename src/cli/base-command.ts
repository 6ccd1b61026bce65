// Subpaths, not the index: the index loads ~50 ms more of oclif that no command uses.
import { Command } from '@oclif/core/command'
import { format } from 'node:util'
import { BrokerError, brokerError, isBrokerError } from '../errors/index.js'
import { closest } from '../../util/closest.js'
import { terminalSafe } from '../services/terminal-text.js'
import { printError } from './print-error.js'

export { printError } from './print-error.js'

/**
 * Every broker command extends this: `--json` prints what run() returns, and errors from the
 * registry are rendered once here (a banner on stderr, or `{error:{code,message}}` on stdout).
 */
export abstract class BrokerCommand extends Command {
  static override enableJsonFlag = true

  /** Human output: what a page, a provider or a stored record put in it is printed with its control characters escaped. */
  override log(message = '', ...args: unknown[]): void {
    super.log(terminalSafe(format(message, ...args)))
  }

  /** Progress and notices on stderr, escaped as log() is. */
  override logToStderr(message = '', ...args: unknown[]): void {
    super.logToStderr(terminalSafe(format(message, ...args)))
  }

  protected override async catch(
    err: Error & { exitCode?: number; code?: string; oclif?: { exit?: number } },
  ): Promise<unknown> {
    // this.exit() and oclif's own exits pass through untouched.
    if (err.code === 'EEXIT') return super.catch(err)
    const broker = toBrokerError(err, { flags: flagNames(this.constructor as typeof BrokerCommand) })
    printError(broker, this.jsonEnabled(), err.stack)
    process.exitCode = broker.exit
    this.exit(broker.exit)
  }

  /**
   * `-h` is help, as in most CLIs, for every command that does not give `-h` a meaning of its own
   * (test-provider's `-h <host>`, which the spec fixes). oclif itself only knows `--help`.
   */
  protected override async init(): Promise<void> {
    await super.init()
    const ctor = this.constructor as typeof BrokerCommand
    const end = this.argv.indexOf('--')
    const own = Object.values(ctor.flags ?? {}).some((f) => (f as { char?: string }).char === 'h')
    if (own || !(end < 0 ? this.argv : this.argv.slice(0, end)).includes('-h')) return
    const { loadHelpClass } = await import('@oclif/core')
    const Help = await loadHelpClass(this.config)
    const command = this.id ? this.config.findCommand(this.id) : undefined
    if (command) await new Help(this.config).showCommandHelp(command, [])
    this.exit(0)
  }
}

/**
 * Any error as a registry error: oclif's flag and argument parse errors are usage errors (exit 2);
 * anything else unexpected is INTERNAL with its first line only (the stack under BROKER_VERBOSE).
 */
export function toBrokerError(
  err: Error & { oclif?: { exit?: number }; args?: unknown },
  command: { flags?: readonly string[] } = {},
): BrokerError {
  if (isBrokerError(err)) return err
  const name = err.constructor?.name ?? ''
  const parseError =
    ('parse' in err && /Flag|Arg|Parse|Failed|Required|Unexpected/i.test(name)) ||
    /^Parsing --|^Flag --\S+ expects (a value|one of these values)/.test(err.message)
  if (parseError) return brokerError('cliUsage', { message: usageMessage(err, command.flags ?? []) })
  const first = err.message.split('\n').find((line) => line.trim()) ?? name
  return brokerError('unexpectedInCli', { firstLine: first.trim() })
}

/** The names of a command's flags, without dashes: `--no-x` for a negatable one, and --json. */
function flagNames(ctor: typeof BrokerCommand): string[] {
  const flags = Object.entries(ctor.flags ?? {}) as Array<[string, { allowNo?: boolean }]>
  return [...flags.flatMap(([name, f]) => (f.allowNo ? [name, `no-${name}`] : [name])), 'json', 'help']
}

/** oclif's parse messages on one line: no "See more help" tail, required args by name, the closest flag to a misspelt one. */
function usageMessage(err: Error & { args?: unknown; flags?: unknown }, flags: readonly string[]): string {
  const help = (text: string) => `${text.replace(/[.:]?\s*$/, '')}; see --help.`
  if (/^Nonexistent flags?: /.test(err.message) && Array.isArray(err.flags)) {
    const named = (err.flags as string[]).map((typed) => {
      const near = closest(typed.replace(/^-+/, '').replace(/=.*$/, ''), flags)
      return near ? `${typed} (did you mean --${near}?)` : typed
    })
    return help(`Nonexistent flag${named.length > 1 ? 's' : ''}: ${named.join(', ')}`)
  }
  if (/^Missing \d+ required arg/.test(err.message) && Array.isArray(err.args)) {
    const names = (err.args as Array<{ name?: string; description?: string }>).map((a) =>
      a.description ? `${a.name} (${a.description.replace(/\.$/, '')})` : a.name,
    )
    return help(`Missing required argument${names.length > 1 ? 's' : ''}: ${names.join(', ')}`)
  }
  const lines = err.message
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !/^See more help/.test(line))
  // "Parsing --max-hops" then the reason: one line, "--max-hops: reason".
  const [head, ...rest] = lines
  const text =
    head && /^Parsing --\S+$/.test(head) && rest.length
      ? `${head.replace(/^Parsing /, '')}: ${rest.join(' ')}`
      : lines.join(' ')
  return help(text)
}
