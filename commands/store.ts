import * as Flags from '@oclif/core/flags'
import { BrokerCommand } from '../src/cli/base-command.js'
import { apiKeyFlag, brokerFlag } from '../src/cli/flags.js'
import { RECORD_FIELDS, switchValues } from '../src/services/store/fields.js'
import { type StoreResult, storeViaBroker } from '../src/services/store/index.js'
import { FLOW_PRESET_NAMES } from '../src/services/store/presets.js'
import { listProviders, type ProviderList, renderProviders } from '../src/services/store/providers.js'
import { renderStored } from '../src/services/store/render.js'
import { terminalSafe } from '../src/services/terminal-text.js'

const fieldFlags = Object.fromEntries(
  RECORD_FIELDS.map((f) => [
    f.flag,
    f.switch
      ? Flags.boolean({ summary: f.summary, allowNo: true, helpGroup: 'RECORD' })
      : Flags.string({ summary: f.summary, options: f.options ? [...f.options] : undefined, helpGroup: 'RECORD' }),
  ]),
)
const SWITCHES = RECORD_FIELDS.filter((f) => f.switch).map((f) => f.flag)

export default class Store extends BrokerCommand {
  static override summary = 'Store a flow at the broker and print its hash, start URL and expiry.'
  static override description = `--flow names the flow (${FLOW_PRESET_NAMES.join(', ')}) and sets the auth_* fields, or names a provider of the catalogue (github, okta, … see --list-providers) whose URLs the record then needs not give. Every record field has a flag; --file takes a whole JSON record and flags override it. Missing required fields are asked for on a terminal, and listed (exit 2) without one. A client or consumer secret saved with --save-secret is found in the keychain by later runs.`

  static override examples = [
    '<%= config.bin %> store --flow oauth2-3 --client-id abc --authorize-url https://provider/authorize --access-url https://provider/token --capture',
    '<%= config.bin %> store --flow oauth2-2 --client-id abc --access-url https://provider/token --save-secret --capture',
    '<%= config.bin %> store --file record.json --callback http://localhost:8080/done --open',
    '<%= config.bin %> store --flow oauth1-3 --consumer-key ck --request-url … --authorize-url … --access-url … --json',
    '<%= config.bin %> store --flow github --client-id abc --scope read:user --capture',
    '<%= config.bin %> store --flow okta --subdomain acme --client-id abc --open',
    '<%= config.bin %> store --flow device --issuer https://login.example.com --client-id abc --scope "openid offline_access"',
    '<%= config.bin %> store --resource https://mcp.example.com/mcp --capture --json',
    '<%= config.bin %> store --list-providers --json',
  ]

  static override flags = {
    flow: Flags.string({ char: 'f', summary: 'The flow, as people say it, or a provider name.' }),
    'list-providers': Flags.boolean({ summary: 'List the providers --flow and the provider field take, and stop.' }),
    file: Flags.string({ summary: 'A JSON file with a whole record; flags override its fields.' }),
    field: Flags.string({
      summary: 'Any other record field, as name=value; repeat for more.',
      multiple: true,
      multipleNonGreedy: true,
    }),
    broker: brokerFlag(),
    'api-key': apiKeyFlag(),
    capture: Flags.boolean({ summary: 'Listen once on 127.0.0.1 as the callback and print the delivered result.' }),
    open: Flags.boolean({
      summary: 'Open the start URL in the browser (a device flow opens its verification page unless --no-open).',
      allowNo: true,
    }),
    'save-secret': Flags.boolean({ summary: 'Keep the client / consumer secret in the OS keychain for later runs.' }),
    'insecure-storage': Flags.boolean({
      summary: 'Without a keychain, keep secrets in a plaintext 0600 file instead.',
    }),
    par: Flags.boolean({
      summary:
        "Push the authorization request to the provider first (PAR, RFC 9126), as --field par=true; --no-par even when the issuer's metadata requires it.",
      allowNo: true,
      helpGroup: 'RECORD',
    }),
    ...fieldFlags,
  }

  async run(): Promise<StoreResult | ProviderList> {
    const { flags } = await this.parse(Store, switchValues(this.argv, SWITCHES))
    if (flags['list-providers']) {
      const list = listProviders()
      if (!this.jsonEnabled()) this.log(renderProviders(list))
      return list
    }
    const fields = Object.fromEntries(
      RECORD_FIELDS.map((f) => [f.field, flags[f.flag] === undefined ? undefined : String(flags[f.flag])]),
    )
    if (flags.par !== undefined) fields.par = String(flags.par)
    const result = await storeViaBroker({
      broker: flags.broker,
      apiKey: flags['api-key'],
      flow: flags.flow,
      file: flags.file,
      fields,
      pairs: flags.field,
      capture: flags.capture,
      open: flags.open,
      saveSecret: flags['save-secret'],
      insecureStorage: flags['insecure-storage'],
      interactive: !this.jsonEnabled(),
      notify: (line) => process.stderr.write(`${terminalSafe(line)}\n`),
      // On a terminal only: a line rewritten each second (erased at the end), never a line per second in a log.
      countdown: process.stderr.isTTY
        ? (text) => process.stderr.write(text === undefined ? '\r\x1b[K' : `\r${terminalSafe(text)}\x1b[K`)
        : undefined,
    })
    if (!this.jsonEnabled()) this.log(renderStored(result))
    return result
  }
}
