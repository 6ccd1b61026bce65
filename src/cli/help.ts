import { Errors, Help } from '@oclif/core'
import { printError } from './base-command.js'
import { commandNotFound } from './hooks/not-found.js'

/**
 * oclif's help, except for a subject that is no command or topic (`broker help stroe`): the same
 * `Error NOT_FOUND` with a "did you mean" as `broker stroe` gives, not oclif's "Command stroe not found."
 */
export default class BrokerHelp extends Help {
  override async showHelp(argv: string[]): Promise<void> {
    try {
      await super.showHelp(argv)
    } catch (err) {
      const subject = /^Command (\S+) not found\.$/.exec((err as Error).message)?.[1]
      if (!subject) throw err
      const notFound = commandNotFound(this.config, subject)
      printError(notFound, argv.includes('--json'))
      Errors.exit(notFound.exit)
    }
  }
}
