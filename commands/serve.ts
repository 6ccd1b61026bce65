import { BrokerCommand } from '../src/cli/base-command.js'
import { configFromFlags, serveFlags } from '../src/cli/config-flags.js'
import { configFileFlag } from '../src/cli/flags.js'
import { type ServeResult, serve } from '../src/services/serve/index.js'

export default class Serve extends BrokerCommand {
  static override summary = 'Run the OAuth broker: a primary process and its workers.'
  static override description = `Settings come from, highest first: these flags, BROKER_* environment variables (store.expire → BROKER_STORE_EXPIRE, callbacks.allow → BROKER_CALLBACKS_ALLOW as a comma list), the config file (-c, else ./config/default.js when it exists), then built-in defaults.

Store: with --store auto (the default) the broker uses Redis when it answers at store.host:store.port within half a second, otherwise an embedded in-process store (one worker only). SIGTERM or SIGINT drains (server.drainDelay, 0 on a loopback listen, then requests in flight), closes the store, removes its pid file and exits 0; a second one stops at once. The pid file is <pid.dir>.broker.pid, or .broker.<port>.pid there while another running broker holds that one: a live broker's pid file is never overwritten.`

  static override examples = [
    '<%= config.bin %> serve',
    '<%= config.bin %> serve -c config/production.js --workers 4',
    'BROKER_STORE_EXPIRE=120 <%= config.bin %> serve --store redis --store-host 10.0.0.5',
    '<%= config.bin %> serve --store memory --port 8080 --host broker.example.com --protocol https',
  ]

  static override flags = { config: configFileFlag(), ...serveFlags() }

  async run(): Promise<ServeResult> {
    const { flags } = await this.parse(Serve)
    return serve({ configFile: flags.config, flags: configFromFlags(flags), json: this.jsonEnabled() })
  }
}
