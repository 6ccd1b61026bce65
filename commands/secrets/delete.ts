import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import { BrokerCommand } from '../../src/cli/base-command.js'
import { brokerFlag } from '../../src/cli/flags.js'
import { deleteSecret, type SecretDeleted } from '../../src/services/secrets/index.js'

export default class SecretsDeleteCommand extends BrokerCommand {
  static override summary = 'Forget the secret kept for a client id or consumer key at a broker.'
  static override examples = [
    '<%= config.bin %> secrets delete my-client-id',
    '<%= config.bin %> secrets delete my-consumer-key --broker https://broker.example',
  ]

  static override args = { id: Args.string({ description: 'The client id or consumer key.', required: true }) }

  static override flags = {
    broker: brokerFlag({ summary: 'The broker URL the secret was saved for.' }),
    'insecure-storage': Flags.boolean({ summary: 'Without a keychain, use the plaintext 0600 file instead.' }),
  }

  async run(): Promise<SecretDeleted> {
    const { args, flags } = await this.parse(SecretsDeleteCommand)
    const result = deleteSecret({ id: args.id, broker: flags.broker, insecureStorage: flags['insecure-storage'] })
    this.logToStderr(`Deleted the secret for ${result.id} at ${result.broker} from ${result.where}.`)
    return result
  }
}
