import type { Hook, Interfaces } from '@oclif/core'
import { type BrokerError, brokerError } from '../../errors/index.js'
import { printError } from '../base-command.js'
import { closestCommand, typedCommand } from './suggest.js'

/** The error for a command line naming no command: the words typed and the closest command, if one is close. */
export function commandNotFound(config: Interfaces.Config, id: string): BrokerError {
  const visible = config.commands.filter((c) => !c.hidden)
  const ids = [...visible.map((c) => c.id), ...visible.flatMap((c) => c.aliases)]
  const typed = typedCommand(id, (prefix) => config.findTopic(prefix) !== undefined)
  const suggestion = closestCommand(typed, ids)
  const show = (words: string) => words.split(':').join(config.topicSeparator)
  return brokerError('commandNotFound', {
    typed: show(typed),
    bin: config.bin,
    suggestion: suggestion && show(suggestion),
  })
}

/**
 * oclif's `command_not_found` hook: a typo gets our error format (`Error NOT_FOUND: …`, or
 * `{error}` under --json) with the closest command as a "did you mean", and `broker -h` is the
 * root help. @oclif/plugin-not-found does the suggesting in oclif's own format (a warning, then
 * a yes/no prompt on a terminal), so it is not among our plugins.
 */
const hook: Hook<'command_not_found'> = async function (opts) {
  const { config } = opts
  if (opts.id === '-h') {
    const { loadHelpClass } = await import('@oclif/core')
    const Help = await loadHelpClass(config)
    await new Help(config).showHelp([])
    return this.exit(0)
  }
  const err = commandNotFound(config, opts.id)
  printError(err, [...(opts.argv ?? []), ...opts.id.split(':')].includes('--json'))
  return this.exit(err.exit)
}

export default hook
