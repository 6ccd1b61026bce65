import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import { BrokerCommand } from '../src/cli/base-command.js'
import { apiKeyFlag, brokerFlagWithoutDefault } from '../src/cli/flags.js'
import { type TestProviderResult, testProvider } from '../src/services/test-provider/index.js'
import { BUILT_IN_PROVIDERS } from '../src/services/test-provider/preset.js'

const presets = BUILT_IN_PROVIDERS.join(', ')

export default class TestProvider extends BrokerCommand {
  static override summary =
    "Run a provider's flow through the broker from a small app on :3001 and print its API's answer."
  static override description = `Visiting http://<host>:3001/ stores the provider's flow at the broker (http://<host>:3000 unless --broker) with callback http://<host>:3001/callback and redirects to the start URL; /callback calls the provider's API with the result and prints the request headers sent and the response. Providers are presets in fixtures/providers (${presets}); --preset-file describes any other.`

  static override examples = [
    '<%= config.bin %> test-provider github -k <client id> -s <client secret> -h localhost --open',
    '<%= config.bin %> test-provider x -k <consumer key> -s <consumer secret> -h 192.168.1.20',
    '<%= config.bin %> test-provider --preset-file my-provider.json -k id -s secret -h localhost --once --json',
  ]

  static override args = {
    provider: Args.string({
      description: `A built-in provider preset (${presets}).`,
    }),
  }

  static override flags = {
    key: Flags.string({ char: 'k', summary: 'Client id or consumer key.' }),
    secret: Flags.string({ char: 's', summary: 'Client or consumer secret.' }),
    host: Flags.string({ char: 'h', summary: 'Host the browser reaches this machine at (localhost, an IP, a name).' }),
    port: Flags.integer({ char: 'p', summary: 'Port of the app server.', default: 3001, min: 1, max: 65535 }),
    broker: brokerFlagWithoutDefault({ summary: 'The broker URL (default http://<host>:3000).' }),
    'api-key': apiKeyFlag(),
    'preset-file': Flags.string({ summary: 'A provider preset JSON file, for a provider without a built-in preset.' }),
    scope: Flags.string({
      summary: "Scope to request instead of the preset's; repeat for more.",
      multiple: true,
      multipleNonGreedy: true,
    }),
    open: Flags.boolean({ summary: 'Open the app URL in the browser.' }),
    once: Flags.boolean({ summary: 'Exit after the first round trip (exit 1 when it fails).' }),
  }

  async run(): Promise<TestProviderResult> {
    const { args, flags } = await this.parse(TestProvider)
    const human = !this.jsonEnabled()
    return testProvider({
      provider: args.provider,
      presetFile: flags['preset-file'],
      key: flags.key,
      secret: flags.secret,
      host: flags.host,
      port: flags.port,
      broker: flags.broker,
      apiKey: flags['api-key'],
      scopes: flags.scope,
      open: flags.open,
      once: flags.once,
      interactive: human,
      root: this.config.root,
      notify: (line) => process.stderr.write(`${line}\n`),
      report: (text) => human && this.log(`${text}\n`),
    })
  }
}
