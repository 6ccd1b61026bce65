import { Command } from '@oclif/core'
import { BrokerError, isBrokerError } from '../errors.js'

/**
 * Every broker command extends this: `--json` prints what run() returns, and errors from the
 * registry are rendered once here (a banner on stderr, or `{error:{code,message}}` on stdout).
 */
export abstract class BrokerCommand extends Command {
  static enableJsonFlag = true

  protected async catch(err: Error & { exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    const broker = toBrokerError(err)
    if (!broker) return super.catch(err)
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

/** oclif's own flag and argument parse errors count as usage errors (exit 2). */
function toBrokerError(err: Error & { oclif?: { exit?: number } }): BrokerError | undefined {
  if (isBrokerError(err)) return err
  const name = err.constructor?.name ?? ''
  if (/Flag|Arg|Parse|Failed|Required|Unexpected/i.test(name) && err.oclif?.exit !== 0 && 'parse' in err) {
    return new BrokerError('USAGE', err.message.split('\n')[0] ?? err.message)
  }
  return undefined
}
