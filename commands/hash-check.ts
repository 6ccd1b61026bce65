import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import { BrokerCommand } from '../src/cli/base-command.js'
import { dashArg } from '../src/cli/dash-arg.js'
import { brokerFlag } from '../src/cli/flags.js'
import { type HashCheck, hashCheck } from '../src/services/hash-check/index.js'
import { renderHashCheck, renderStatus, watchEnd } from '../src/services/hash-check/render.js'
import { terminalSafe } from '../src/services/terminal-text.js'

export default class HashCheckCommand extends BrokerCommand {
  static override summary = 'Show a stored flow: its record (secrets redacted), plugin, progress and seconds left.'
  static override examples = [
    '<%= config.bin %> hash-check Yk3…',
    '<%= config.bin %> hash-check Yk3… --watch',
    'BROKER_URL=https://broker.example <%= config.bin %> hash-check Yk3… --json',
  ]

  static override args = { hash: Args.string({ description: 'The hash `broker store` printed.', required: true }) }

  static override flags = {
    broker: brokerFlag(),
    watch: Flags.boolean({
      char: 'w',
      summary:
        'Refresh progress and seconds left every second until the flow ends or expires; exit 1 unless it completed.',
    }),
  }

  async run(): Promise<HashCheck> {
    const { args, flags } = await this.parse(HashCheckCommand, dashArg(this.argv, HashCheckCommand.flags))
    const human = !this.jsonEnabled()
    const live = human && process.stdout.isTTY
    const result = await hashCheck({
      broker: flags.broker,
      hash: args.hash,
      watch: flags.watch,
      onTick: human
        ? (r) =>
            live ? process.stdout.write(`\r\u001b[2K${terminalSafe(renderStatus(r))}`) : this.log(renderStatus(r))
        : undefined,
    })
    if (live && flags.watch) process.stdout.write('\n')
    if (human) this.log(renderHashCheck(result))
    // A watch is for seeing the flow through: one that expired unfinished, or failed, is a failure.
    const ended = watchEnd(result)
    if (flags.watch && ended !== 'completed') {
      if (human) this.logToStderr(ended === 'failed' ? 'The flow failed.' : 'The flow expired before it finished.')
      process.exitCode = 1
    }
    return result
  }
}
