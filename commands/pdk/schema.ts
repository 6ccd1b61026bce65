import * as Flags from '@oclif/core/flags'
import { BrokerCommand } from '../../src/cli/base-command.js'
import { fixtureSchema, fixtureSchemaText, type PdkSchemaResult } from '../../src/services/pdk/schema.js'

export default class PdkSchema extends BrokerCommand {
  static override summary = 'Print where the fixture JSON Schema is, for a fixture\'s "$schema"'
  static override description =
    'Prints the absolute path of pdk/fixture/fixture.schema.json in this copy of broker (installed or a checkout); point a fixture\'s "$schema" at it (or at its file: URL, under --json) for completion and checks in an editor. --print prints the schema itself.'

  static override examples = [
    '<%= config.bin %> pdk schema',
    '<%= config.bin %> pdk schema --print > fixture.schema.json',
    '<%= config.bin %> pdk schema --json',
  ]

  static override flags = {
    print: Flags.boolean({ description: 'print the schema itself instead of its path' }),
  }

  async run(): Promise<PdkSchemaResult> {
    const { flags } = await this.parse(PdkSchema)
    const result = fixtureSchema()
    if (!this.jsonEnabled()) this.log(flags.print ? fixtureSchemaText(result.path).trimEnd() : result.path)
    return result
  }
}
