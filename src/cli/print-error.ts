import type { BrokerError } from '../errors/index.js'
import { terminalSafe } from '../services/terminal-text.js'

// Apart from base-command.ts (oclif): `broker serve`'s primary (serve-main.ts) prints its errors too.

/** A registry error as the CLI prints it: a banner and its next step on stderr, or `{error}` on stdout under --json. */
export function printError(broker: BrokerError, json: boolean, stack?: string): void {
  if (json) {
    process.stdout.write(JSON.stringify({ error: broker.toJSON() }, null, 2) + '\n')
    return
  }
  // A message may quote a provider's error description or a page: escaped like all human output.
  process.stderr.write(terminalSafe(`Error ${broker.code}: ${broker.message}\n`))
  if (broker.next) process.stderr.write(terminalSafe(`  → ${broker.next}\n`))
  if (process.env.BROKER_VERBOSE && stack) process.stderr.write(stack + '\n')
}
