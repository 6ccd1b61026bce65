import * as Flags from '@oclif/core/flags'
import { BrokerCommand } from '../../src/cli/base-command.js'
import { listSecrets, type SecretsList } from '../../src/services/secrets/index.js'
import { table } from '../../src/services/store/render.js'

export default class SecretsListCommand extends BrokerCommand {
  static override summary =
    'List the client and consumer secrets kept in the OS keychain (ids only, never the secrets).'
  static override examples = [
    '<%= config.bin %> secrets list',
    '<%= config.bin %> secrets list --broker https://broker.example --json',
  ]

  static override flags = {
    broker: Flags.string({ summary: 'Only the secrets kept for this broker URL.' }),
    'insecure-storage': Flags.boolean({ summary: 'Without a keychain, read the plaintext 0600 file instead.' }),
  }

  async run(): Promise<SecretsList> {
    const { flags } = await this.parse(SecretsListCommand)
    const result = listSecrets({ broker: flags.broker, insecureStorage: flags['insecure-storage'] })
    if (!this.jsonEnabled()) {
      this.logToStderr(`${result.secrets.length} secret${result.secrets.length === 1 ? '' : 's'} in ${result.where}.`)
      if (result.secrets.length)
        this.log(
          table([['BROKER', 'CLIENT ID / CONSUMER KEY'], ...result.secrets.map((s) => [s.broker, s.id] as const)]).join(
            '\n',
          ),
        )
    }
    return result
  }
}
