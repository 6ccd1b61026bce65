import { Command } from '@oclif/core'
import { BrokerError, brokerError, isBrokerError } from '../errors.js'

/**
 * Every broker command extends this: `--json` prints what run() returns, and errors from the
 * registry are rendered once here (a banner on stderr, or `{error:{code,message}}` on stdout).
 */
export abstract class BrokerCommand extends Command {
  static enableJsonFlag = true

  protected async catch(
    err: Error & { exitCode?: number; code?: string; oclif?: { exit?: number } },
  ): Promise<unknown> {
    // this.exit() and oclif's own exits pass through untouched.
    if (err.code === 'EEXIT') return super.catch(err)
    const broker = toBrokerError(err)
    if (this.jsonEnabled()) {
      process.stdout.write(JSON.stringify({ error: broker.toJSON() }, null, 2) + '\n')
    } else {
      process.stderr.write(`Error ${broker.code}: ${broker.message}\n`)
      if (broker.next) process.stderr.write(`  → ${broker.next}\n`)
      if (process.env.BROKER_VERBOSE && err.stack) process.stderr.write(err.stack + '\n')
    }
    process.exitCode = broker.exit
    this.exit(broker.exit)
  }
}

/**
 * Any error as a registry error: oclif's flag and argument parse errors are usage errors (exit 2);
 * anything else unexpected is INTERNAL with its first line only (the stack under BROKER_VERBOSE).
 */
export function toBrokerError(err: Error & { oclif?: { exit?: number }; args?: unknown }): BrokerError {
  if (isBrokerError(err)) return err
  const name = err.constructor?.name ?? ''
  const parseError =
    ('parse' in err && /Flag|Arg|Parse|Failed|Required|Unexpected/i.test(name)) || /^Parsing --/.test(err.message)
  if (parseError) return brokerError('cliUsage', { message: usageMessage(err) })
  const first = err.message.split('\n').find((line) => line.trim()) ?? name
  return brokerError('unexpectedInCli', { firstLine: first.trim() })
}

/** oclif's parse messages on one line: no "See more help" tail, required args by name. */
function usageMessage(err: Error & { args?: unknown }): string {
  const help = (text: string) => `${text.replace(/[.:]?\s*$/, '')}; see --help.`
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
